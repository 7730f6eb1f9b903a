/** Structured one-line logs on stderr; stdout belongs to stdio frames. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export const LOG_LEVELS = Object.keys(RANK) as LogLevel[];

/** Header names whose values never reach a log line. */
const SECRET_KEYS = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key)$/i;

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
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}

export function createLogger(level: LogLevel = 'info', base: Record<string, unknown> = {}, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const emit = (lvl: LogLevel, event: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < RANK[level]) return;
    const record = { t: new Date().toISOString(), level: lvl, event, ...base, ...(fields ? (redact(fields) as object) : {}) };
    write(JSON.stringify(record, errorReplacer) + '\n');
  };
  return {
    level,
    debug: (e, f) => emit('debug', e, f),
    info: (e, f) => emit('info', e, f),
    warn: (e, f) => emit('warn', e, f),
    error: (e, f) => emit('error', e, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

/** A logger that writes nothing (tests, library use). */
export const silentLogger: Logger = createLogger('silent');
