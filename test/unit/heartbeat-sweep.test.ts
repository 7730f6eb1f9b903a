import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HeartbeatSweep } from '../../src/faces/heartbeat-sweep.js';

/** One shared timer beats every member once a period, never before 3/4 of a period after it joined. */
describe('HeartbeatSweep', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function member() {
    const beats: number[] = [];
    return { beats, heartbeat: () => void beats.push(Date.now()) };
  }

  it('beats each member once a period, the first one 3/4 to 1 period after it joined', () => {
    const sweep = new HeartbeatSweep(400);
    const start = Date.now();
    const a = member();
    sweep.add(a);
    vi.advanceTimersByTime(250);
    const b = member();
    sweep.add(b);
    vi.advanceTimersByTime(2000);
    expect(a.beats.map((t) => t - start)).toEqual([400, 800, 1200, 1600, 2000]);
    const bFirst = b.beats[0] - (start + 250);
    expect(bFirst).toBeGreaterThanOrEqual(300);
    expect(bFirst).toBeLessThanOrEqual(400);
    for (let i = 1; i < b.beats.length; i++) expect(b.beats[i] - b.beats[i - 1]).toBe(400);
  });

  it('a member deleted stops beating, and the timer stops with the last member', () => {
    const sweep = new HeartbeatSweep(100);
    const a = member();
    const b = member();
    const slotA = sweep.add(a);
    const slotB = sweep.add(b);
    vi.advanceTimersByTime(100);
    sweep.delete(a, slotA);
    vi.advanceTimersByTime(300);
    expect(a.beats).toHaveLength(1);
    expect(b.beats).toHaveLength(4);
    expect(sweep.size).toBe(1);
    sweep.delete(b, slotB);
    sweep.delete(b, slotB);
    expect(sweep.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('adding a member twice keeps one entry; a member ending during its beat is fine', () => {
    const sweep = new HeartbeatSweep(100);
    const slots: number[] = [];
    const ending = { beats: 0, heartbeat: () => void (ending.beats++, sweep.delete(ending, slots[0])) };
    slots.push(sweep.add(ending));
    expect(sweep.add(ending)).toBe(slots[0]);
    expect(sweep.size).toBe(1);
    vi.advanceTimersByTime(500);
    expect(ending.beats).toBe(1);
    expect(sweep.size).toBe(0);
  });
});
