package knowledge

import "strconv"

// Need is one library a TensorFlow build dlopens.
type Need struct {
	Name   string // cudart, cublasLt, cudnn
	Soname string // libcudart.so.12
	// Mark is the verification mark of the fact that TensorFlow asks for
	// this soname.
	Mark Mark
	// Required: TensorFlow registers no GPU without it.
	Required bool
}

// TFNeeds lists the libraries a TensorFlow version dlopens: the soname
// table row of its version (knowledge.md 3.2), corrected by the build's own
// CUDA and cuDNN versions when build_info.py gives them (buildCUDA,
// buildCUDNN; "" when unknown). cudaMajor picks the sonames of the
// libraries every version loads. The mark is the soname row's.
func TFNeeds(tfVersion, buildCUDA, buildCUDNN string, cudaMajor int) ([]Need, Mark) {
	row, ok := SonamesFor(tfVersion)
	mark := row.Mark
	if !ok {
		row, mark = LatestSonames(), MarkU
	}
	required, _ := RequiredLibs()
	isReq := map[string]bool{}
	for _, n := range required {
		isReq[n] = true
	}
	var out []Need
	for _, n := range []string{"cudart", "cublas", "cublasLt", "cufft", "curand", "cusolver", "cusparse", "cudnn"} {
		so, m := row.Soname(n), mark
		switch {
		case buildCUDA != "" && (n == "cudart" || n == "cublas" || n == "cublasLt"):
			// The CUDA runtime and cuBLAS carry the CUDA major.
			v := Version(buildCUDA)
			if v.Major() >= 12 {
				so, m = "lib"+n+".so."+strconv.Itoa(v.Major()), MarkV
			} else if v.Major() == 11 {
				if n == "cudart" {
					so = "libcudart.so.11.0"
				} else {
					so = "lib" + n + ".so.11"
				}
				m = MarkS
			}
		case buildCUDNN != "" && n == "cudnn":
			if v := Version(buildCUDNN); v.Major() > 0 {
				so, m = "libcudnn.so."+strconv.Itoa(v.Major()), MarkV
			}
		}
		if so == "" {
			continue
		}
		out = append(out, Need{Name: n, Soname: so, Mark: m, Required: isReq[n]})
	}
	for _, a := range AlwaysLibs() {
		if a.MinCUDAMajor > 0 && cudaMajor < a.MinCUDAMajor {
			continue
		}
		out = append(out, Need{Name: a.Lib, Soname: a.SonameFor(cudaMajor), Mark: a.Mark, Required: a.Lib == "cuda"})
	}
	return out, mark
}
