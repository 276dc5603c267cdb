//! Starting subjects: one command built from a launch (a resolved program,
//! its arguments and exactly the given environment, nothing inherited; its
//! own process group; piped stdout and stderr), started under one lock and
//! registered as this process's own child, by a blocking or an async owner.
//!
//! Also the one other program a producer runs about a subject: its runtime
//! asked for its version.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use super::proc;
use super::sandbox::{Stage, Tools};

/// Held while a subject is started and registered, and while adopted
/// orphans are swept: a subject another thread has just started is never
/// taken for an orphan.
pub(super) static SPAWN_LOCK: Mutex<()> = Mutex::new(());

/// Hold the spawn lock: no subject starts meanwhile, so a process found
/// now that is not a registered subject was not just started by another
/// thread (its number cannot be one a fresh subject is about to register).
pub fn hold_spawn_lock() -> std::sync::MutexGuard<'static, ()> {
    SPAWN_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What starts the subject: a resolved program, its arguments and exactly this
/// environment (nothing is inherited).
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Where each process of this launch runs: a sandbox of its own, or
    /// (`None`) none.
    pub sandbox: Option<super::sandbox::LaunchSandbox>,
}

/// The subject's stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinMode {
    /// A pipe the driver writes (the stdio transport).
    Piped,
    /// `/dev/null` (a server driven over HTTP).
    Null,
}

/// The command that starts `program` with `args` and exactly `env` (the
/// environment cleared first), in a process group of its own (its pid is
/// its group's id), with piped stdout and stderr and `stdin` as said. The
/// working directory is the caller's.
pub fn command(
    program: &Path,
    args: &[String],
    env: &BTreeMap<String, String>,
    stdin: StdinMode,
) -> Command {
    command_in(None, program, args, env, stdin)
}

/// [`command`], in `sandbox` when given: the command runs `unshare` and the
/// sandbox's helper, which execute the subject in place (same process, same
/// group, same pipes, exactly `env`).
pub fn command_in(
    sandbox: Option<(&Stage, &Tools)>,
    program: &Path,
    args: &[String],
    env: &BTreeMap<String, String>,
    stdin: StdinMode,
) -> Command {
    let mut cmd = match sandbox {
        Some((stage, tools)) => {
            let (unshare, argv) = stage.wrap(tools, program, args);
            let mut cmd = Command::new(unshare);
            cmd.args(argv);
            cmd
        }
        None => {
            let mut cmd = Command::new(program);
            cmd.args(args);
            cmd
        }
    };
    cmd.env_clear()
        .envs(env)
        .stdin(match stdin {
            StdinMode::Piped => Stdio::piped(),
            StdinMode::Null => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd
}

/// The command that runs a tool mcpres drives beside a subject (not a
/// subject: the official conformance suite): `program` with `args` in `dir`,
/// the caller's environment, no stdin, piped stdout and stderr, in a process
/// group of its own (so that a stop kills what it started).
pub fn tool_command(program: &Path, args: &[std::ffi::OsString], dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd
}

/// Start `cmd` (from [`command`]) for a blocking owner, which reaps it and
/// then calls [`proc::unregister_child`].
pub fn spawn(mut cmd: Command) -> std::io::Result<std::process::Child> {
    let _spawning = SPAWN_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let child = cmd.spawn()?;
    proc::register_child(child.id());
    Ok(child)
}

/// Start `cmd` (from [`command`]) for an async owner, which reaps it and
/// then calls [`proc::unregister_child`]. The child is killed if dropped
/// unreaped. Needs a tokio runtime.
pub fn spawn_async(cmd: Command) -> std::io::Result<tokio::process::Child> {
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let _spawning = SPAWN_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let child = cmd.spawn()?;
    if let Some(pid) = child.id() {
        proc::register_child(pid);
    }
    Ok(child)
}

/// What `PROGRAM --version` prints (stdout, else stderr; trimmed), run with
/// an empty environment and no stdin; `unknown` when it prints nothing or
/// cannot run.
pub fn runtime_version(program: &Path) -> String {
    Command::new(program)
        .arg("--version")
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|o| {
            let text = if o.stdout.is_empty() {
                o.stderr
            } else {
                o.stdout
            };
            String::from_utf8_lossy(&text).trim().to_string()
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Resolve PROGRAM the way a subject is started: a name with a `/` is a
/// path; a bare name is looked up in the harness's own `PATH`. The result is
/// absolute, so the subject never needs a `PATH` to be started. Symlinks are
/// kept, not resolved: a virtualenv's `bin/python` only works under its own name.
pub fn resolve_program(program: &str) -> Option<PathBuf> {
    let candidate = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .map(|_| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
    };
    if program.contains('/') {
        return candidate(Path::new(program));
    }
    // As a shell does: a file in PATH that cannot be executed is passed over.
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter_map(|dir| candidate(&dir.join(program)))
        .find(|p| super::sandbox::can_execute(p).is_ok())
}

/// [`resolve_program`], and the file found must be executable by mcpres: a
/// program that cannot be started is unusable input, never a subject that
/// fails its checks. The error says which, in words for the operator
/// (`shown` is PROGRAM as the operator should see it).
pub fn resolve_executable(program: &str, shown: &str) -> Result<PathBuf, String> {
    let resolved = resolve_program(program).ok_or_else(|| {
        format!("PROGRAM {shown} is not an existing file (bare names are looked up in PATH)")
    })?;
    super::sandbox::can_execute(&resolved)
        .map_err(|e| format!("PROGRAM {shown} cannot be executed: {e}"))?;
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    #[test]
    fn a_subject_gets_exactly_its_environment_and_a_group_of_its_own() {
        let env = BTreeMap::from([("ONLY".to_string(), "this".to_string())]);
        let cmd = command(
            Path::new("/bin/sh"),
            &["-c".into(), "env".into()],
            &env,
            StdinMode::Null,
        );
        let mut child = spawn(cmd).expect("sh starts");
        let pid = child.id();
        assert!(proc::is_own_child(pid));
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        // Not reaped yet: readable in /proc even once it exited.
        let me = proc::read(pid).expect("the child in /proc");
        assert_eq!(me.pgid, i32::try_from(pid).unwrap());
        let status = child.wait().unwrap();
        proc::unregister_child(pid);
        assert!(status.success());
        let vars: Vec<&str> = out
            .lines()
            .filter(|l| {
                // What a shell sets by itself.
                !["PWD=", "OLDPWD=", "SHLVL=", "_="]
                    .iter()
                    .any(|own| l.starts_with(own))
            })
            .collect();
        assert_eq!(vars, ["ONLY=this"], "{out}");
        assert!(!proc::is_own_child(pid));
    }

    #[test]
    fn the_runtime_version_is_what_the_program_prints() {
        let dir = tempfile::tempdir().unwrap();
        let prog = dir.path().join("rt");
        std::fs::write(&prog, "#!/bin/sh\necho \"rt 1.2 $HOME\" >&2\n").unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(runtime_version(&prog), "rt 1.2");
        assert_eq!(runtime_version(&dir.path().join("missing")), "unknown");
    }
}
