/**
 * Process statistics from Linux /proc for tests and benchmarks: resident memory and CPU time of a child process, and
 * the peak resident memory of this process over a window.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** Resident set size of a process in bytes (Linux /proc), 0 when unknown. */
export function readRss(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a process used so far, in seconds (Linux /proc; clock ticks of 1/100 s); 0 when unknown. */
export function readCpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    // Fields after the command name (which may hold spaces) start at field 3: utime and stime are fields 14 and 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * Starts a window for {@link readPeakRss}: asks the kernel to reset this process's peak RSS (VmHWM) to its current
 * RSS (Linux ≥ 4.0: `5` to /proc/self/clear_refs). Returns false where that is not possible: the peak then counts
 * from the start of the process, still an upper bound.
 */
export function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * The largest resident set size of this process, in bytes, since {@link resetPeakRss} (or its start). The kernel
 * keeps it, so it misses no spike between two reads and is right even when the event loop was blocked meanwhile.
 */
export function readPeakRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}
