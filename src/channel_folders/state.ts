// Register's `channel_folders`: every folder, archived ones included (digest section 4).
import type { StateSection } from '../events/state.ts';
import { listFolders } from './queries.ts';
import { formatFolder, type ApiChannelFolder } from './format.ts';

export const channelFoldersSection: StateSection<{ channel_folders: ApiChannelFolder[] }> = {
  types: ['channel_folders'],
  async fetch(ctx) {
    return { channel_folders: (await listFolders(ctx.svc.db, ctx.realm.id, true)).map(formatFolder) };
  },
  apply(state, event) {
    if (event.type !== 'channel_folder') return;
    const folders = state.channel_folders;
    if (event.op === 'add') {
      const folder = event.channel_folder;
      if (!folders.some((f) => f.id === folder.id)) folders.push(folder);
    } else if (event.op === 'update') {
      const folder = folders.find((f) => f.id === event.channel_folder_id);
      if (folder) Object.assign(folder, event.data);
    } else if (event.op === 'reorder') {
      const order = event.order;
      for (const f of folders) f.order = order.indexOf(f.id);
      folders.sort((a, b) => a.order - b.order || a.id - b.id);
    }
  },
};
