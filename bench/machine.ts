/**
 * What a benchmark result was measured on: absolute numbers mean little without it (shared, noisy machines).
 */
import os from 'node:os';

/** Machine facts written next to every benchmark result. */
export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
  hostname: string;
  /** 1, 5 and 15 minute load averages when described: other work on a shared machine skews every figure. */
  loadAverage: number[];
}

/** Reads the current machine's facts. */
export function describeMachine(): MachineInfo {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    hostname: os.hostname(),
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** Median and percentiles of a sample (nearest-rank). */
export function summarize(values: number[]): { n: number; min: number; p50: number; p90: number; p99: number; max: number } {
  const xs = [...values].sort((a, b) => a - b);
  const at = (q: number) => xs[Math.min(xs.length - 1, Math.max(0, Math.ceil(q * xs.length) - 1))] ?? NaN;
  return { n: xs.length, min: xs[0] ?? NaN, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: xs[xs.length - 1] ?? NaN };
}
