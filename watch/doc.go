// Package watch answers "why is my GPU idle while training runs?". It
// samples a running job at a steady rate (1 Hz by default) and judges the
// samples:
//
//   - per GPU, through NVML (the GPUs interface; NVML() is the real one):
//     utilisation, memory, SM and memory clocks, clock event (throttle)
//     reasons, power, temperature, the compute processes and, where the
//     driver reports it, each process's share;
//   - the job (a PID and its descendants, the tree refreshed every sample;
//     or every GPU process): CPU use in percent of one core summed over its
//     processes, its busiest thread, threads, block I/O wait and bytes read
//     and written; and the machine's CPU and iowait (gopsutil).
//
// Analyze is a pure function of the samples (a Series) that gives the
// verdicts, each with its evidence: the GPU is busy (healthy); it starves
// because the job's input pipeline saturates the CPU or waits on I/O
// (data_pipeline_bottleneck); it idles though the CPU is free
// (gpu_underutilized); the job is not among the GPU's processes at all
// (gpu_not_used: run doctor); GPU memory is nearly full
// (gpu_memory_preallocation); the clocks are held down (gpu_throttled);
// another process competes for the GPU (gpu_out_of_memory_other_process).
// The findings carry TensorFlow advice (tf.data prefetch, cache, parallel
// map, larger batches, mixed precision, XLA, memory growth) as printed-only
// fixes that say why and when each applies.
//
// Report builds a doctor.report/v1 report from the findings with
// rules.Assemble; package report renders it. Live draws the samples while
// they come. Sampling costs well under 1% of one core at 1 Hz: the
// benchmark BenchmarkSample measures one sample, and every report carries
// doctor's own CPU use over the watch (self_cpu_percent).
package watch
