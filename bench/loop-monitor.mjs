// Loaded into the service process by the queue load and long-day benchmarks (`node --import`): it measures how
// long the event loop is held. SIGUSR2 starts a measurement (start-up is not counted); SIGWINCH
// writes the longest stall and the 99th percentile of the delay since then to BENCH_LOOP_FILE.<pid> (each of the service's processes
// loads it: its request processes inherit the options). (SIGUSR1 is Node's debugger signal.)
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
process.on('SIGUSR2', () => histogram.reset());
process.on('SIGWINCH', () => {
  writeFileSync(`${process.env.BENCH_LOOP_FILE}.${process.pid}`, JSON.stringify({ max_ms: histogram.max / 1e6, p99_ms: histogram.percentile(99) / 1e6 }));
});
