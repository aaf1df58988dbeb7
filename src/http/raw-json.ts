// A member of an answer that is JSON text already, as UTF-8: a large part kept serialized
// between requests (register's user list) is copied into the answer once, instead of being
// built, serialized and encoded again (on this project's machines each pass over a 4 MB
// answer costs about 13 ms). Only top-level members of a handler's result are spliced
// (router.ts); in any other JSON.stringify, toJSON makes it the value it stands for.

export class RawJson {
  /** The JSON text, in pieces to be written one after another. */
  readonly chunks: readonly Buffer[];

  constructor(chunks: readonly Buffer[]) {
    this.chunks = chunks;
  }

  /** The value the text stands for. */
  parse(): unknown {
    return JSON.parse(Buffer.concat(this.chunks).toString('utf8'));
  }

  /** For a serializer that does not splice: correct, only slower. */
  toJSON(): unknown {
    return this.parse();
  }
}

/** Whether some top-level member of `members` is a RawJson. */
export function hasRawMember(members: Record<string, unknown>): boolean {
  for (const key in members) if (members[key] instanceof RawJson) return true;
  return false;
}

/** JSON.stringify of `members` as UTF-8, with the RawJson among them copied in as they are. */
export function serializeMembers(members: Record<string, unknown>): Buffer {
  const out: Buffer[] = [];
  let text = '{';
  let first = true;
  for (const key in members) {
    const value = members[key];
    // What JSON.stringify leaves out of an object.
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (value instanceof RawJson) {
      out.push(Buffer.from(text), ...value.chunks);
      text = '';
    } else {
      text += JSON.stringify(value);
    }
  }
  out.push(Buffer.from(`${text}}`));
  return Buffer.concat(out);
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** A JSON array of the given JSON texts, in pieces. */
export function rawArray(items: readonly Buffer[]): RawJson {
  const chunks: Buffer[] = [OPEN];
  for (const [i, item] of items.entries()) {
    if (i > 0) chunks.push(COMMA);
    chunks.push(item);
  }
  chunks.push(CLOSE);
  return new RawJson(chunks);
}
