package host

import (
	"reflect"
	"testing"
)

const buildInfo215 = `# Copyright 2017 The TensorFlow Authors. All Rights Reserved.
# ==============================================================================
"""Auto-generated module providing information about the build."""
import collections

build_info = collections.OrderedDict()
build_info['cpu_compiler'] = '/usr/lib/llvm-16/bin/clang'
build_info['cuda_compute_capabilities'] = ['sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80']
build_info['cuda_version'] = '12.2'
build_info['cudnn_version'] = '8'
build_info['is_cuda_build'] = True
build_info['is_rocm_build'] = False
build_info['is_tensorrt_build'] = True
`

const buildInfo24 = `
import collections
build_info = {'cpu_compiler': '/dt7/usr/bin/gcc', 'cuda_compute_capabilities': ['sm_35', 'sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80'],
              'cuda_version': '11.0', 'cudnn_version': '8',
              "is_cuda_build": True, 'is_rocm_build': False}
`

const buildInfoOld = `
is_rocm_build = False
is_cuda_build = True
cuda_version_number = '10.0'
cudnn_version_number = '7'
`

const buildInfoWindows = `
build_info = collections.OrderedDict([('cuda_version', '64_112'), ('cudnn_version', '64_8'), ('is_cuda_build', True), ('msvcp_dll_names', 'msvcp140.dll,msvcp140_1.dll')])
`

const buildInfoCPU = `
import collections
build_info = collections.OrderedDict()
build_info['cpu_compiler'] = '/usr/bin/gcc'
build_info['is_cuda_build'] = False
build_info['is_rocm_build'] = False
build_info['is_tensorrt_build'] = False
`

func TestParseBuildInfo(t *testing.T) {
	tr, fa := true, false
	for _, c := range []struct {
		name      string
		text      string
		cuda, dnn string
		isCUDA    *bool
		caps      []string
		wantErr   bool
	}{
		{"2.15 OrderedDict", buildInfo215, "12.2", "8", &tr, []string{"sm_50", "sm_60", "sm_70", "sm_75", "compute_80"}, false},
		{"2.4 dict literal", buildInfo24, "11.0", "8", &tr, []string{"sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "compute_80"}, false},
		{"1.x module names", buildInfoOld, "10.0", "7", &tr, nil, false},
		{"windows OrderedDict list", buildInfoWindows, "11.2", "8", &tr, nil, false},
		{"cpu build", buildInfoCPU, "", "", &fa, nil, false},
		{"empty", "", "", "", nil, nil, true},
		{"garbage", "def f(:\n  build_info[ = ]]]\n'unterminated", "", "", nil, nil, true},
	} {
		bi := ParseBuildInfo(c.text)
		if bi.CUDAVersion != c.cuda || bi.CUDNNVersion != c.dnn || !reflect.DeepEqual(bi.IsCUDABuild, c.isCUDA) || !reflect.DeepEqual(bi.ComputeCapabilities, c.caps) || (bi.Error != "") != c.wantErr {
			t.Errorf("%s: got cuda %q cudnn %q is_cuda %v caps %v err %q", c.name, bi.CUDAVersion, bi.CUDNNVersion, ptrBool(bi.IsCUDABuild), bi.ComputeCapabilities, bi.Error)
		}
	}
	bi := ParseBuildInfo(buildInfo215)
	if bi.Fields["cpu_compiler"] != "/usr/lib/llvm-16/bin/clang" || bi.Fields["is_tensorrt_build"] != "True" {
		t.Errorf("fields: %v", bi.Fields)
	}
}

func ptrBool(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func FuzzParseBuildInfo(f *testing.F) {
	for _, s := range []string{buildInfo215, buildInfo24, buildInfoOld, buildInfoWindows, buildInfoCPU, "build_info = {", "build_info['x'] = [[[[", "x = '''a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bi := ParseBuildInfo(s)
		if bi == nil {
			t.Fatal("nil")
		}
	})
}
