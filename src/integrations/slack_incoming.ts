// Slack-compatible incoming webhooks: `text`, Block Kit blocks and legacy
// attachments, with Slack's link and emphasis syntax turned into Markdown.
import type { Integration } from './index.ts';
import { badRequest, missingArgument } from '../http/errors.ts';
import { jsonBody, list, maybe, obj, str, type Json, type JsonObject, type WebhookRequest } from './payload.ts';

const BLOCK_TYPES = ['actions', 'context', 'divider', 'header', 'image', 'input', 'section'];

/** Slack sends JSON bodies, or a form with the JSON in `payload`. */
function slackPayload(req: WebhookRequest): JsonObject {
  if (req.contentType === 'application/json') return jsonBody(req);
  const form = req.param('payload');
  if (form === undefined) throw missingArgument('payload');
  return jsonBody({ ...req, body: form });
}

const joinPieces = (pieces: string[]) =>
  pieces
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .join('\n\n');

function textOf(block: Json, plainOnly = false): string {
  const type = str(block, 'type');
  if (type !== 'plain_text' && (plainOnly || type !== 'mrkdwn')) throw badRequest(`Malformed payload: unknown text type '${type}'`);
  return str(block, 'text');
}

function elementOf(element: Json): string {
  if (str(element, 'type') !== 'image') return '';
  return `[${str(element, 'alt_text')}](${str(element, 'image_url')})`;
}

function fieldsTable(fields: Json[]): string {
  if (fields.length === 1) return textOf(fields[0]);
  // Slack shows two columns; Markdown tables hold no newlines or pipes.
  const cells = fields.map((f) => textOf(f).replaceAll('\n', ' ').replaceAll('|', ' '));
  let table = '| | |\n|-|-|\n';
  for (let i = 0; i < cells.length; i += 2) table += `| ${cells[i]} | ${cells[i + 1] ?? ''} |\n`;
  return table;
}

function renderBlock(block: Json): string {
  const type = str(block, 'type');
  if (!BLOCK_TYPES.includes(type)) throw badRequest(`Malformed payload: unknown block type '${type}'`);
  if (type === 'context' && maybe(block, 'elements')) {
    return joinPieces(list(block, 'elements').map((e) => (str(e, 'type') === 'image' ? elementOf(e) : textOf(e))));
  }
  if (type === 'divider') return '----';
  if (type === 'header') return `## ${textOf(obj(block, 'text'), true)}`;
  if (type === 'image') {
    const title = maybe(block, 'title');
    return `[${title !== undefined ? textOf(title, true) : str(block, 'alt_text')}](${str(block, 'image_url')})`;
  }
  if (type === 'section') {
    const pieces: string[] = [];
    if (maybe(block, 'text') !== undefined) pieces.push(textOf(obj(block, 'text')));
    if (maybe(block, 'accessory') !== undefined) pieces.push(elementOf(obj(block, 'accessory')));
    if (maybe(block, 'fields') !== undefined) pieces.push(fieldsTable(list(block, 'fields')));
    return joinPieces(pieces);
  }
  return '';
}

function renderAttachment(a: Json): string {
  const pieces: string[] = [];
  const title = maybe(a, 'title');
  const link = maybe(a, 'title_link');
  if (title) pieces.push(link ? `## [${title}](${link})` : `## ${title}`);
  for (const key of ['pretext', 'text']) if (maybe(a, key)) pieces.push(str(a, key));
  if (maybe(a, 'fields') !== undefined) {
    const lines = list(a, 'fields').flatMap((f) => {
      const t = maybe(f, 'title');
      const v = maybe(f, 'value');
      if (t && v) return [`*${t}*: ${v}`];
      if (t) return [`*${t}*`];
      if (v) return [`${v}`];
      return [];
    });
    pieces.push(lines.join('\n'));
  }
  if (maybe(a, 'blocks')) pieces.push(...list(a, 'blocks').map(renderBlock));
  if (maybe(a, 'image_url')) pieces.push(`[](${str(a, 'image_url')})`);
  if (maybe(a, 'footer')) pieces.push(str(a, 'footer'));
  if (maybe(a, 'ts')) pieces.push(`<time:${maybe(a, 'ts')}>`);
  return joinPieces(pieces);
}

/** Slack's <url|text> links as Markdown links. */
const replaceLinks = (text: string) => text.replace(/<(\w+?:\/\/.*?)\|(.*?)>/g, '[$2]($1)');

/** Slack's *bold* and _italic_ as Markdown's **bold** and *italic*. */
function replaceFormatting(text: string): string {
  return text
    .replace(/([^\w]|^)\*(?!\s+)([^*\n]+)(?<!\s)\*((?=[^\w])|$)/g, '$1**$2**$3')
    .replace(/([^\w]|^)_(?!\s+)([^_\n]+)(?<!\s)_((?=[^\w])|$)/g, '$1*$2*$3');
}

export const slackIncoming: Integration = {
  name: 'slack_incoming',
  displayName: 'Slack',
  allEventTypes: null,
  handle(req, { userTopic }) {
    const payload = slackPayload(req);
    const channel = maybe(payload, 'channel');
    const topic = userTopic ?? (typeof channel === 'string' ? channel.replace(/^[@#]/, '') : '(no topic)');
    const pieces: string[] = [];
    if (maybe(payload, 'blocks')) pieces.push(...list(payload, 'blocks').map(renderBlock));
    if (maybe(payload, 'attachments')) pieces.push(...list(payload, 'attachments').map(renderAttachment));
    let body = joinPieces(pieces);
    if (body === '' && maybe(payload, 'text')) {
      const emoji = maybe(payload, 'icon_emoji');
      body = `${emoji ? `${emoji} ` : ''}${str(payload, 'text')}`.trim();
    }
    if (body === '') return [];
    return [{ topic, content: replaceFormatting(replaceLinks(body).trim()) }];
  },
};
