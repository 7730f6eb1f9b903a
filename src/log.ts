/** Structured one-line logs on stderr; stdout belongs to stdio frames. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export const LOG_LEVELS = Object.keys(RANK) as LogLevel[];

/** Field and header names whose values never reach a log line. */
const SECRET_KEYS =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|apikey|x-auth-token|auth-token|authtoken|x-access-token|access-token|private-token|password|secret|client-secret|requeststatekey|request-state-key)$/i;

/** What a redacted value reads as. */
export const REDACTED = '[redacted]';

/** Shorter configured secrets are not scrubbed from text: they would match too much to mean anything. */
const MIN_SCRUBBED_SECRET = 4;

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
  readonly level: LogLevel;
}

/** Replaces credential-bearing values (by key) before a record is written. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || typeof value !== 'object' || value === null) return value;
  // Errors have no enumerable fields: copying them would log `{}`; errorReplacer writes name and message.
  if (value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) ? REDACTED : redact(v, depth + 1);
  return out;
}

/** A URL as text with any `user:password@` part masked: what an error message may quote back. */
export function maskUrlCredentials(url: string): string {
  return url.replace(/\/\/[^/?#@\s]*@/g, `//${REDACTED}@`);
}

/**
 * Replaces every occurrence of a configured secret (an upstream `--header`
 * value, the auth token) in a serialized line, whatever field or message it
 * hides in: an upstream's error text may quote the header back.
 */
export function scrubSecrets(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const secret of secrets) {
    if (secret.length < MIN_SCRUBBED_SECRET) continue;
    // The line is JSON, so the secret appears in its JSON-escaped form.
    const escaped = JSON.stringify(secret).slice(1, -1);
    out = out.split(escaped).join(REDACTED);
  }
  return out;
}

/** How lines look: one JSON object each (for collectors), or `time LEVEL event key=value…` for a person. */
export type LogFormat = 'json' | 'pretty';

export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/** `--log-format` absent: pretty when stderr is a terminal (someone is reading it), JSON otherwise. */
export function defaultLogFormat(stream: { isTTY?: boolean } = process.stderr): LogFormat {
  return stream.isTTY ? 'pretty' : 'json';
}

/** `secrets` are scrubbed from every line this logger and its children write. */
export function createLogger(
  level: LogLevel = 'info',
  base: Record<string, unknown> = {},
  write: (line: string) => void = (l) => process.stderr.write(l),
  secrets: readonly string[] = [],
  format: LogFormat = 'json',
): Logger {
  return new FieldLogger(level, base, write, secrets, format);
}

/**
 * A logger and its fields. The methods live on the prototype: every session and
 * stream takes a child logger, and six closures and their context each cost
 * ~450 B of heap per idle session where this costs one small object (issue 17).
 */
class FieldLogger implements Logger {
  constructor(
    readonly level: LogLevel,
    private readonly base: Record<string, unknown>,
    private readonly write: (line: string) => void,
    private readonly secrets: readonly string[],
    private readonly format: LogFormat,
  ) {}

  debug(event: string, fields?: Record<string, unknown>): void {
    this.emit('debug', event, fields);
  }

  info(event: string, fields?: Record<string, unknown>): void {
    this.emit('info', event, fields);
  }

  warn(event: string, fields?: Record<string, unknown>): void {
    this.emit('warn', event, fields);
  }

  error(event: string, fields?: Record<string, unknown>): void {
    this.emit('error', event, fields);
  }

  child(fields: Record<string, unknown>): Logger {
    // Object.assign, not `{ ...base, ...fields }`: that copy got a hidden class of its own per child (~225 B each).
    return new FieldLogger(this.level, Object.assign({}, this.base, fields), this.write, this.secrets, this.format);
  }

  private emit(lvl: LogLevel, event: string, fields?: Record<string, unknown>): void {
    if (RANK[lvl] < RANK[this.level]) return;
    const record = { t: new Date().toISOString(), level: lvl, event, ...this.base, ...(fields ? (redact(fields) as object) : {}) };
    const line = this.format === 'pretty' ? prettyLine(record) : JSON.stringify(record, errorReplacer);
    this.write(scrubSecrets(line, this.secrets) + '\n');
  }
}

/**
 * `12:34:56.789 WARN  http.refused reason=origin status=403`: the time of day,
 * the level, the event, then the fields as key=value with values in JSON (so
 * strings with spaces stay one token, and scrubSecrets finds escaped secrets
 * the same way as in JSON lines).
 */
function prettyLine(record: { t: string; level: LogLevel; event: string } & Record<string, unknown>): string {
  const { t, level, event, ...fields } = record;
  let line = `${t.slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${event}`;
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    const text = typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v, errorReplacer);
    line += ` ${k}=${text}`;
  }
  return line;
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  // An id beyond ±(2^53−1) (jsonrpc/id-codec.ts): logged as its digits, in a string.
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** A logger that writes nothing (tests, library use). */
export const silentLogger: Logger = createLogger('silent');
