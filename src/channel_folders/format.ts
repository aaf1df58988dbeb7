import type { ChannelFolder } from '../channels/tables.ts';

export interface ApiChannelFolder {
  id: number;
  name: string;
  description: string;
  rendered_description: string;
  creator_id: number | null;
  date_created: number;
  is_archived: boolean;
  order: number;
}

export function formatFolder(f: ChannelFolder): ApiChannelFolder {
  return {
    id: f.id,
    name: f.name,
    description: f.description,
    rendered_description: f.rendered_description,
    creator_id: f.creator_id,
    date_created: Math.floor(f.date_created.getTime() / 1000),
    is_archived: f.is_archived,
    order: f.order,
  };
}
