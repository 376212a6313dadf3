import { describe, expect, it } from 'vitest';
import { seeded } from '../core/random.js';
import { Histogram } from './histogram.js';

describe('Histogram', () => {
  it('answers quantiles of whole numbers below 1024 exactly, and keeps the exact mean', () => {
    const h = new Histogram();
    for (let v = 1; v <= 100; v++) h.add(v);
    expect(h.quantile(0.5)).toBe(50);
    expect(h.quantile(0.99)).toBe(99);
    expect(h.quantile(1)).toBe(100);
    expect(h.mean).toBe(50.5);
    expect(h.standardDeviation).toBeCloseTo(Math.sqrt((100 * 100 - 1) / 12), 9);
    expect(h.max).toBe(100);
    expect(h.count).toBe(100);
  });

  it('is within 0.3 % above 1024, never above the largest value', () => {
    const random = seeded(3);
    const values = Array.from({ length: 20_000 }, () => 1024 * 2 ** (random() * 20));
    const h = new Histogram();
    for (const v of values) h.add(v);
    values.sort((a, b) => a - b);
    for (const q of [0.1, 0.5, 0.9, 0.99, 0.999]) {
      const exact = values[Math.ceil(q * values.length) - 1] as number;
      expect(Math.abs(h.quantile(q) / exact - 1)).toBeLessThan(0.003);
    }
    expect(h.quantile(1)).toBeLessThanOrEqual(h.max);
  });

  it('is all zeros when empty', () => {
    const h = new Histogram();
    expect([h.mean, h.standardDeviation, h.quantile(0.5), h.max]).toEqual([0, 0, 0, 0]);
  });
});
