package watch

import (
	"strconv"
	"strings"

	"github.com/tfdoctor/doctor/checks"
)

// Fix IDs of the TensorFlow advice, from the one fix catalog. They are
// printed only (Manual): the change belongs in the user's training code.
const (
	FixRunDoctor         = checks.FixRunDoctor
	FixTFDataParallelMap = checks.FixTFDataParallelMap
	FixTFDataPrefetch    = checks.FixTFDataPrefetch
	FixTFDataCache       = checks.FixTFDataCache
	FixTFLargerBatch     = checks.FixTFLargerBatch
	FixTFMixedPrecision  = checks.FixTFMixedPrecision
	FixTFXLA             = checks.FixTFXLA
	FixTFMemoryGrowth    = checks.FixTFMemoryGrowth
)

const mixedPrecisionMinimum = 7.0 // tensor cores: Volta (7.0) and newer

// advice builds a printed-only fix whose steps say why and when it applies,
// then the code.
func advice(id, title, why, when string, code ...string) checks.Fix {
	steps := []string{"# why: " + why, "# when: " + when}
	return checks.Fix{ID: id, Title: title, Risk: checks.RiskSafe, Manual: true, Steps: append(steps, code...)}
}

func adviceParallelMap(busiest float64, cpus float64) checks.Fix {
	return advice(FixTFDataParallelMap, "Run the input pipeline's map() on several cores",
		"a map() without num_parallel_calls runs its function on one thread; AUTOTUNE spreads it over the free cores",
		"the busiest thread of the job sits at one full core ("+pct(busiest)+") while "+cores(cpus)+" are available",
		"dataset = dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)",
		"# also for files: tf.data.Dataset.interleave(..., num_parallel_calls=tf.data.AUTOTUNE)")
}

func advicePrefetch() checks.Fix {
	return advice(FixTFDataPrefetch, "Prepare the next batches while the GPU trains on this one",
		"without prefetch the GPU waits for every batch to be built; prefetch overlaps input preparation with training",
		"the GPU idles between steps and the dataset does not end in .prefetch(); add it as the last step of the pipeline",
		"dataset = dataset.prefetch(tf.data.AUTOTUNE)")
}

func adviceCache(io bool) checks.Fix {
	when := "the preprocessing is the same every epoch (decode, resize, tokenise) and its output fits in memory, or on a local disk with cache(filename)"
	if io {
		when = "the job waits on reads: after the first epoch, cache() serves the data from memory (or a fast local file) instead of the slow storage"
	}
	return advice(FixTFDataCache, "Cache the decoded dataset after the first epoch",
		"cache() keeps the output of the steps before it, so later epochs skip reading and decoding",
		when,
		"dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE).cache()  # random augmentation after cache()",
		"# or on disk: .cache('/local/ssd/train.cache')")
}

func adviceLargerBatch() checks.Fix {
	return advice(FixTFLargerBatch, "Use larger batches",
		"a small batch gives the GPU tiny kernels and many steps: launch overhead and per-step Python work dominate, and the SMs idle between kernels",
		"GPU memory has room (see mem_used_max_percent) and utilisation stays low though the CPU is not saturated; scale the learning rate with the batch",
		"dataset = dataset.batch(256)  # e.g. 4-8x the current size, as memory allows",
		"model.fit(dataset, ...)  # steps_per_execution=N in model.compile() also cuts per-step overhead")
}

func adviceMixedPrecision(cc string) checks.Fix {
	return advice(FixTFMixedPrecision, "Train in mixed precision",
		"float16/bfloat16 math runs on the tensor cores and halves activation memory and traffic",
		"the GPU has compute capability "+cc+" (7.0 or newer has tensor cores) and is busy with compute",
		"tf.keras.mixed_precision.set_global_policy('mixed_float16')  # 'mixed_bfloat16' on 8.0+",
		"# keep the last layer in float32: layers.Activation('softmax', dtype='float32')")
}

func adviceXLA() checks.Fix {
	return advice(FixTFXLA, "Compile the training step with XLA",
		"XLA fuses many small ops into few kernels: fewer launches and memory round trips",
		"the model has many small ops (utilisation low with a free CPU, or to speed up a busy GPU); shapes should be static",
		"model.compile(optimizer, loss, jit_compile=True)",
		"# or: @tf.function(jit_compile=True) on a custom train step")
}

func adviceMemoryGrowth() checks.Fix {
	return advice(FixTFMemoryGrowth, "Let TensorFlow grow its GPU memory instead of taking it all",
		"TensorFlow maps nearly all GPU memory at start; a second process (or PyTorch/JAX in the same one) then runs out",
		"several processes share the GPU, or the memory shown as used is not what the model needs",
		"for gpu in tf.config.list_physical_devices('GPU'): tf.config.experimental.set_memory_growth(gpu, True)",
		"# or before starting Python: export TF_FORCE_GPU_ALLOW_GROWTH=true")
}

func fixRunDoctor(title string) checks.Fix {
	return checks.Fix{ID: FixRunDoctor, Title: title, Risk: checks.RiskSafe, Manual: true,
		Steps: []string{
			"doctor   # run in the job's environment (or: doctor --python /path/to/env/bin/python)",
			`python -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"`,
		}}
}

func fixCheckCooling() checks.Fix {
	return checks.Fix{ID: checks.FixCheckCooling, Title: "Check cooling and power", Risk: checks.RiskSafe, Manual: true,
		Steps: []string{"nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER", "Check fans, airflow and the power cables; clean dust filters"}}
}

func fixUseFreeGPU(gpu int) checks.Fix {
	return checks.Fix{ID: checks.FixUseFreeGPU, Title: "Run the job on a GPU nobody else uses, or when the other job ends", Risk: checks.RiskSafe, Manual: true,
		Steps: []string{"nvidia-smi   # find a free GPU", "CUDA_VISIBLE_DEVICES=<free index> python train.py   # GPU " + strconv.Itoa(gpu) + " is shared"}}
}

func fixStopProcess(o OtherProc) checks.Fix {
	return checks.Fix{ID: checks.FixStopGPUProcess, Title: "Stop " + describe(o.PID, o.Command) + " if it is yours and no longer needed", Risk: checks.RiskDangerous,
		Steps:  []string{"kill " + strconv.Itoa(o.PID) + "   # only with its owner's consent"},
		Params: map[string]string{"pid": strconv.Itoa(o.PID), "command": o.Command}}
}

// ccAtLeast compares a "major.minor" compute capability.
func ccAtLeast(cc string, min float64) bool {
	maj, minor, ok := strings.Cut(cc, ".")
	if !ok {
		return false
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return false
	}
	return float64(a)+float64(b)/10 >= min
}

func pct(v float64) string { return strconv.FormatFloat(r1(v), 'f', -1, 64) + "%" }

func cores(n float64) string {
	s := strconv.FormatFloat(r1(n), 'f', -1, 64)
	if n == 1 {
		return s + " core"
	}
	return s + " cores"
}
