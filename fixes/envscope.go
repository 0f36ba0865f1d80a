package fixes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tfdoctor/doctor/host"
)

// Setting a variable for one Python environment, in the narrowest place
// that exists for it:
//
//   - conda: a script in $PREFIX/etc/conda/activate.d sets it on `conda
//     activate`, its twin in deactivate.d restores the previous value on
//     `conda deactivate`. conda sources these itself; nothing else changes.
//   - venv: a venv has no activate.d. Its bin/activate is the venv's own
//     definition of its environment, read only when this venv is activated,
//     so a marked block appended there is the narrowest scope without
//     touching Python's start-up (sitecustomize or .pth files run for every
//     interpreter start and would hide the setting from the shell). Limits,
//     printed with the plan: bin/activate's deactivate does not undo the
//     block, and recreating the venv (python -m venv --clear/--upgrade)
//     drops it; activate.fish and activate.csh are left alone.
//   - anything else (the system Python, a venv that is not writable): a
//     marked block in the user's shell rc file, for every new shell.

type scopeKind string

const (
	scopeConda scopeKind = "conda"
	scopeVenv  scopeKind = "venv"
	scopeRC    scopeKind = "rc"
)

type scope struct {
	kind   scopeKind
	prefix string // conda or venv prefix
	file   string // venv bin/activate or rc file
}

// envScope picks where a variable for the examined environment goes: the
// finding's Params (env_kind, env_prefix) first, then the examined
// environment (examinedEnv), else the shell rc file.
func (m *Machine) envScope(p *Plan) scope {
	kind, prefix := p.param("env_kind"), p.param("env_prefix")
	if prefix == "" || !filepath.IsAbs(prefix) {
		kind, prefix = "", ""
	}
	if kind == "" {
		kind, prefix = m.examinedEnv()
	}
	switch kind {
	case "conda":
		if isDir(prefix) {
			return scope{kind: scopeConda, prefix: prefix}
		}
	case "venv":
		act := filepath.Join(prefix, "bin", "activate")
		if st, err := os.Stat(act); err == nil && st.Mode().IsRegular() {
			return scope{kind: scopeVenv, prefix: prefix, file: act}
		}
	}
	return scope{kind: scopeRC, file: m.shellRC()}
}

// examinedEnv is the kind (venv, conda, system) and prefix of the
// environment doctor examined: the snapshot's Python, else the interpreter
// doctor's one resolver (host.ResolvePython) picks from Env, so a fix acts
// for the same interpreter the checks and the ladder looked at.
func (m *Machine) examinedEnv() (kind, prefix string) {
	if m.Snap != nil && m.Snap.Python != nil && m.Snap.Python.Found && filepath.IsAbs(m.Snap.Python.Prefix) {
		return m.Snap.Python.Kind, m.Snap.Python.Prefix
	}
	env := make([]string, 0, len(m.Env))
	for k, v := range m.Env {
		env = append(env, k+"="+v)
	}
	// Env paths are this machine's (not under Root): resolve on "/".
	_, source, err := host.ResolvePython(host.Options{Environ: env})
	if err != nil {
		return "", ""
	}
	switch source {
	case "CONDA_PREFIX":
		return "conda", m.getenv("CONDA_PREFIX")
	case "VIRTUAL_ENV":
		return "venv", m.getenv("VIRTUAL_ENV")
	}
	return "", ""
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// readMaybe reads a file; a missing file reads as nil with exists false.
func readMaybe(path string) (data []byte, exists bool, err error) {
	data, err = os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// writeStep adds a step that makes path hold content, unless it already
// does. It reports whether a step was added.
func (p *Plan) writeStep(path string, content []byte, mode os.FileMode, why string) bool {
	old, exists, err := readMaybe(path)
	if err != nil {
		p.refuse("cannot read %s: %v", path, err)
		return false
	}
	if exists && string(old) == string(content) {
		return false
	}
	if !exists {
		old = nil
	}
	p.add(Step{Kind: KindWrite, Path: path, Content: content, Old: old, Mode: mode, Why: why})
	return true
}

// blockStep adds a step that sets doctor's block id in path to body,
// unless it already reads so. The block is applied to the file as it is
// when the step runs, so two fixes may each add their block to one file.
func (p *Plan) blockStep(path string, old []byte, id, body, why string) {
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	if string(upsertBlock(old, id, body)) == string(old) {
		return
	}
	p.add(Step{Kind: KindBlock, Path: path, Block: id, Body: body, Old: old, Content: upsertBlock(old, id, body), Mode: 0o644, Why: why})
}

// setVars plans setting vars (name → value; nil unsets) for the examined
// environment. id names the files and blocks, so a second run finds and
// replaces them instead of adding more.
func (m *Machine) setVars(p *Plan, id string, names []string, vals map[string]*string) {
	sc := m.envScope(p)
	switch sc.kind {
	case scopeConda:
		act := filepath.Join(sc.prefix, "etc", "conda", "activate.d", "doctor-"+id+".sh")
		deact := filepath.Join(sc.prefix, "etc", "conda", "deactivate.d", "doctor-"+id+".sh")
		p.writeStep(act, []byte(condaActivate(id, names, vals)), 0o644, "set on `conda activate` of "+sc.prefix)
		p.writeStep(deact, []byte(condaDeactivate(id, names)), 0o644, "restore on `conda deactivate`")
		p.note("Takes effect at the next activation: conda deactivate && conda activate %s", shQuote(sc.prefix))
	case scopeVenv:
		old, _, err := readMaybe(sc.file)
		if err != nil {
			p.refuse("cannot read %s: %v", sc.file, err)
			return
		}
		body := "# Added by doctor --fix for this venv only; `deactivate` does not undo it. Undo: doctor fix --undo.\n" + exports(names, vals)
		p.blockStep(sc.file, old, id, body, "set when this venv is activated")
		p.note("Takes effect at the next activation: deactivate && source %s", shQuote(sc.file))
		p.note("A venv has no activate.d; the block in bin/activate stays until the shell ends and is lost if the venv is recreated")
	default:
		old, _, err := readMaybe(sc.file)
		if err != nil {
			p.refuse("cannot read %s: %v", sc.file, err)
			return
		}
		body := "# Added by doctor --fix. Undo: doctor fix --undo.\n" + exports(names, vals)
		p.blockStep(sc.file, old, id, body, "set in every new shell (no conda env or venv is active)")
		p.note("Takes effect in new shells; in this one: %s", strings.TrimSpace(strings.ReplaceAll(exports(names, vals), "\n", "; ")))
	}
	if p.Env == nil {
		p.Env = map[string]*string{}
	}
	for _, n := range names {
		p.Env[n] = vals[n]
	}
}

// exports renders export/unset lines; values are single-quoted, so nothing
// in them is expanded when the file is sourced.
func exports(names []string, vals map[string]*string) string {
	var b strings.Builder
	for _, n := range names {
		if v := vals[n]; v != nil {
			fmt.Fprintf(&b, "export %s=%s\n", n, shQuote(*v))
		} else {
			fmt.Fprintf(&b, "unset %s\n", n)
		}
	}
	return b.String()
}

func savedName(n string) string { return "_DOCTOR_SAVED_" + n }

// condaActivate is the activate.d script: save each variable's value (or
// its absence), then set it. POSIX sh: conda sources it from sh, bash, zsh.
func condaActivate(id string, names []string, vals map[string]*string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by doctor --fix (%s). deactivate.d/doctor-%s.sh restores the previous values.\n", id, id)
	fmt.Fprintf(&b, "# Undo: doctor fix --undo, or delete both files.\n")
	for _, n := range names {
		s := savedName(n)
		fmt.Fprintf(&b, "if [ -n \"${%s+x}\" ]; then export %s=\"$%s\"; else unset %s; fi\n", n, s, n, s)
	}
	b.WriteString(exports(names, vals))
	return b.String()
}

// condaDeactivate is the deactivate.d twin: restore what activation saved.
func condaDeactivate(id string, names []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by doctor --fix (%s): restores what activate.d/doctor-%s.sh changed.\n", id, id)
	for _, n := range names {
		s := savedName(n)
		fmt.Fprintf(&b, "if [ -n \"${%s+x}\" ]; then export %s=\"$%s\"; unset %s; else unset %s; fi\n", s, n, s, s, n)
	}
	return b.String()
}
