// Package fixes turns findings into repairs that are safe to run on a
// person's machine, following the fix safety rules of DESIGN.md.
//
// A fix ID (from the one fix catalog, checks/catalog.go, which also holds
// its least risk, needs-root and parameters) maps to a planner. A planner
// inspects the machine — files under a root folder, the user's home and environment, all
// injected through a Machine so tests use temporary homes, conda prefixes and
// --root trees — and produces a Plan: a list of Steps that are plain data.
//
//   - write: replace a file with a full new content (or create it);
//   - comment: disable one exact line of a file;
//   - preserve: back up a file that a following command will change;
//   - run: run a command given as argv, never a shell string;
//   - signal: stop one process (SIGTERM, then SIGKILL after a grace period).
//
// What cannot be done from here (a reboot, the Windows side, the firmware)
// is printed as instructions. The whole plan is shown before anything runs.
//
// A Session applies plans after consent: on a terminal it asks per fix (and
// per process for stop-gpu-process); without a terminal it acts only with
// --yes; --yes never covers a dangerous fix, which runs only when its ID is
// named on the command line and confirmed on a terminal. Needs-root steps run
// only as root; otherwise the plan shows the sudo line and nothing changes.
//
// Every edited file is backed up into a journal in the state directory
// ($XDG_STATE_HOME/doctor, default ~/.local/state/doctor) before the edit and
// written atomically; Undo restores the last run's files byte for byte. A
// lock file in the same folder keeps two runs apart. Planners only emit steps
// that change something, so a second run changes nothing.
package fixes
