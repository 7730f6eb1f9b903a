import { describe, expect, it } from 'vitest';
import { isOriginAllowed } from '../../src/faces/origin.js';

const rows: Array<{ origin: string | undefined; allow: string[]; allowed: boolean }> = [
  { origin: undefined, allow: [], allowed: true },
  { origin: 'http://localhost', allow: [], allowed: true },
  { origin: 'http://localhost:5173', allow: [], allowed: true },
  { origin: 'https://localhost:8443', allow: [], allowed: true },
  { origin: 'http://127.0.0.1:8808', allow: [], allowed: true },
  { origin: 'http://[::1]:3000', allow: [], allowed: true },
  { origin: 'http://LOCALHOST:1', allow: [], allowed: true },
  { origin: 'http://evil.example', allow: [], allowed: false },
  { origin: 'http://localhost.evil.example', allow: [], allowed: false },
  { origin: 'http://127.0.0.1.nip.io', allow: [], allowed: false },
  { origin: 'file://localhost', allow: [], allowed: false },
  { origin: 'null', allow: [], allowed: false },
  { origin: 'null', allow: ['null'], allowed: true },
  { origin: 'not a url', allow: [], allowed: false },
  { origin: 'https://app.example.com', allow: ['https://app.example.com'], allowed: true },
  { origin: 'https://APP.example.com', allow: ['https://app.example.com/'], allowed: true },
  { origin: 'https://app.example.com:443', allow: ['https://app.example.com'], allowed: true },
  { origin: 'http://app.example.com', allow: ['https://app.example.com'], allowed: false },
  { origin: 'https://app.example.com:8443', allow: ['https://app.example.com'], allowed: false },
  { origin: 'https://other.example.com', allow: ['https://app.example.com'], allowed: false },
  { origin: 'https://anything.example', allow: ['*'], allowed: true },
];

describe('isOriginAllowed', () => {
  it.each(rows)('$origin with $allow → $allowed', ({ origin, allow, allowed }) => {
    expect(isOriginAllowed(origin, allow)).toBe(allowed);
  });
});
