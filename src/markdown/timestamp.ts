// `<time:...>`: a date the reader sees in their own time zone. The reference
// server accepts whatever python-dateutil parses, else a UNIX timestamp. We
// accept the forms people write in practice: ISO 8601, "31 Dec 2017",
// "Jun 5th 2017, 10:30PM", "December 31, 2017 10:00 am UTC", compact
// YYYYMMDD[hhmm[ss]], and UNIX seconds. Anything else is an error.

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const MONTH_NAMES = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const WEEKDAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** Offsets (minutes) of common time zone abbreviations. */
const ZONES: Record<string, number> = {
  utc: 0,
  gmt: 0,
  z: 0,
  ut: 0,
  est: -300,
  edt: -240,
  cst: -360,
  cdt: -300,
  mst: -420,
  mdt: -360,
  pst: -480,
  pdt: -420,
  akst: -540,
  akdt: -480,
  hst: -600,
  bst: 60,
  cet: 60,
  cest: 120,
  eet: 120,
  eest: 180,
  wet: 0,
  west: 60,
  ist: 330,
  jst: 540,
  kst: 540,
  aest: 600,
  aedt: 660,
  acst: 570,
  awst: 480,
  nzst: 720,
  nzdt: 780,
  msk: 180,
  sgt: 480,
  hkt: 480,
};

interface Parts {
  year?: number;
  month?: number;
  day?: number;
  hour?: number;
  minute?: number;
  second?: number;
  micro?: number;
  offset?: number; // minutes east of UTC
}

function monthIndex(word: string): number {
  const w = word.toLowerCase().replace(/\.$/, '');
  let i = MONTH_NAMES.indexOf(w);
  if (i < 0 && w.length === 3) i = MONTHS.indexOf(w);
  if (i < 0 && w === 'sept') i = 8;
  return i;
}

function isWeekday(word: string): boolean {
  const w = word.toLowerCase().replace(/[.,]$/, '');
  return WEEKDAY_NAMES.includes(w) || WEEKDAYS.includes(w);
}

function parseOffset(s: string): number | null {
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(s);
  if (!m) return null;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  if (minutes >= 24 * 60) return NaN;
  return m[1] === '-' ? -minutes : minutes;
}

function parseIso(s: string): Parts | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6})\d*)?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i.exec(s);
  if (!m) return null;
  const p: Parts = { year: +m[1]!, month: +m[2]! - 1, day: +m[3]!, hour: +(m[4] ?? 0), minute: +(m[5] ?? 0), second: +(m[6] ?? 0) };
  if (m[7]) p.micro = Number(m[7].padEnd(6, '0'));
  if (m[8]) p.offset = m[8].toLowerCase() === 'z' ? 0 : parseOffset(m[8])!;
  return p;
}

function parseCompact(s: string): Parts | null {
  const m = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?$/.exec(s);
  if (!m || ![8, 12, 14].includes(s.length)) return null;
  return { year: +m[1]!, month: +m[2]! - 1, day: +m[3]!, hour: +(m[4] ?? 0), minute: +(m[5] ?? 0), second: +(m[6] ?? 0) };
}

function parseWords(s: string): Parts | null {
  const tokens = s.replace(/,/g, ' ').split(/\s+/).filter(Boolean);
  const p: Parts = {};
  const numbers: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const lower = t.toLowerCase();
    let m: RegExpExecArray | null;
    if ((m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?$/i.exec(t))) {
      if (p.hour !== undefined) return null;
      p.hour = +m[1]!;
      p.minute = +m[2]!;
      p.second = +(m[3] ?? 0);
      const ampm = m[4] ?? (/^(am|pm)$/i.test(tokens[i + 1] ?? '') ? tokens[++i] : undefined);
      if (ampm) {
        if (p.hour < 1 || p.hour > 12) return null;
        const pm = ampm.toLowerCase().startsWith('p');
        p.hour = (p.hour % 12) + (pm ? 12 : 0);
      }
    } else if ((m = /^(\d{1,2})\s*(am|pm)$/i.exec(t))) {
      if (p.hour !== undefined) return null;
      const h = +m[1]!;
      if (h < 1 || h > 12) return null;
      p.hour = (h % 12) + (m[2]!.toLowerCase() === 'pm' ? 12 : 0);
      p.minute = 0;
      p.second = 0;
    } else if (monthIndex(t) >= 0) {
      if (p.month !== undefined) return null;
      p.month = monthIndex(t);
    } else if (isWeekday(t)) {
      // ignored, as dateutil does
    } else if ((m = /^(\d{1,2})(st|nd|rd|th)$/i.exec(t))) {
      if (p.day !== undefined) return null;
      p.day = +m[1]!;
    } else if (/^\d{4}$/.test(t)) {
      if (p.year !== undefined) return null;
      p.year = +t;
    } else if (/^\d{1,2}$/.test(t)) {
      numbers.push(+t);
    } else if ((m = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$/.exec(t))) {
      p.year = +m[1]!;
      p.month = +m[2]! - 1;
      p.day = +m[3]!;
    } else if ((m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(t))) {
      p.month = +m[1]! - 1;
      p.day = +m[2]!;
      p.year = +m[3]!;
    } else if (lower in ZONES) {
      p.offset = ZONES[lower];
    } else if (/^[+-]\d{2}:?\d{2}$/.test(t)) {
      p.offset = parseOffset(t)!;
    } else if (lower === 'at' || lower === 'of' || lower === 'the') {
      // filler words
    } else {
      return null;
    }
  }
  for (const n of numbers) {
    if (p.day === undefined) p.day = n;
    else return null;
  }
  if (p.month === undefined && p.day === undefined && p.year === undefined && p.hour === undefined) return null;
  return p;
}

/** Parses a `<time:...>` value to an ISO timestamp (`2017-06-05T22:30:00Z`), or null. */
export function parseTimestamp(input: string, now: Date = new Date()): string | null {
  const s = input.trim();
  if (!s) return null;
  let parts = parseIso(s) ?? parseCompact(s);
  if (!parts && /^[+-]?(\d+\.?\d*|\.\d+)$/.test(s)) return fromUnix(Number(s));
  parts ??= parseWords(s);
  if (!parts) return null;
  if (parts.offset !== undefined && Number.isNaN(parts.offset)) return null;
  const year = parts.year ?? now.getUTCFullYear();
  const month = parts.month ?? (parts.year === undefined && parts.day === undefined ? now.getUTCMonth() : 0);
  const day = parts.day ?? (parts.month === undefined && parts.year === undefined ? now.getUTCDate() : 1);
  const { hour = 0, minute = 0, second = 0, micro = 0 } = parts;
  if (year < 1 || year > 9999 || month < 0 || month > 11 || hour > 23 || minute > 59 || second > 59) return null;
  const daysInMonth = new Date(Date.UTC(2000, month + 1, 0)).getUTCDate() + (month === 1 && !isLeap(year) ? -1 : 0);
  if (day < 1 || day > daysInMonth) return null;
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  d.setUTCHours(hour, minute, second, 0);
  const ms = d.getTime() - (parts.offset ?? 0) * 60_000;
  return format(ms, micro);
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function fromUnix(seconds: number): string | null {
  if (!Number.isFinite(seconds)) return null;
  const whole = Math.floor(seconds);
  return format(whole * 1000, Math.round((seconds - whole) * 1e6) % 1_000_000);
}

function format(ms: number, micro: number): string | null {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return null;
  const year = d.getUTCFullYear();
  if (year < 1 || year > 9999) return null;
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  let iso = `${pad(year, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  if (micro) iso += '.' + pad(micro, 6);
  return iso + 'Z';
}
