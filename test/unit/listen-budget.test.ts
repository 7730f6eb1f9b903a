import { describe, expect, it } from 'vitest';
import { ListenBudget } from '../../bridges/shared/listen-budget.js';

/** The daemon-wide `--max-listens` bound: slots taken, refused at the bound, given back. */
describe('ListenBudget', () => {
  it('take() refuses at the bound and its release gives the slot back once however often it is called', () => {
    const budget = new ListenBudget(2);
    const a = budget.take()!;
    const b = budget.take()!;
    expect(budget.take()).toBeUndefined();
    a();
    a();
    expect(budget.size).toBe(1);
    expect(budget.take()).toBeDefined();
    b();
    expect(budget.size).toBe(1);
  });

  it('tryTake() and give() count the same slots as take()', () => {
    const budget = new ListenBudget(2);
    expect(budget.tryTake()).toBe(true);
    const release = budget.take()!;
    expect(budget.tryTake()).toBe(false);
    expect(budget.take()).toBeUndefined();
    budget.give();
    expect(budget.size).toBe(1);
    release();
    expect(budget.size).toBe(0);
  });

  it('give() never counts below zero', () => {
    const budget = new ListenBudget(1);
    budget.give();
    expect(budget.size).toBe(0);
    expect(budget.tryTake()).toBe(true);
    expect(budget.tryTake()).toBe(false);
  });

  it('is unbounded by default', () => {
    const budget = new ListenBudget();
    for (let i = 0; i < 1000; i++) expect(budget.tryTake()).toBe(true);
    expect(budget.size).toBe(1000);
  });
});
