"""How a code worker locks itself in, with nothing but the kernel (ctypes, no dependency).

In order, in the worker before it reads its job: new mount, network, IPC and UTS namespaces
(`unshare`); a root of its own (a tmpfs holding the standard library read-only and a writable
`/scratch`, entered with `chroot`); a user id of its own, no groups, so no capability is left and it
can signal or trace no other process; limits (`setrlimit`: address space, CPU, file size, no
processes); `no_new_privs` and a seccomp filter that refuses sockets, process creation, exec,
ptrace, signals to others, mounts and the kernel's rarer doors with EPERM. Each layer alone would
stop most escapes; together a way around one (say, reaching `os` through a module's globals) meets
the next. Runs as root (the service does, here and in CI); elsewhere `unshare` fails and the sandbox
says it is unavailable.
"""

from __future__ import annotations

import ctypes
import os
import resource
import struct

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
NEW_ROOT = "/tmp"  # a tmpfs is mounted over it inside the worker's own mount namespace only
SCRATCH = "/scratch"
SCRATCH_SIZE = "16m"

# x86_64 system call numbers refused with EPERM (Linux's arch/x86/entry/syscalls/syscall_64.tbl).
DENIED_X86_64 = {
    "socket": 41, "connect": 42, "accept": 43, "bind": 49, "listen": 50, "socketpair": 53,
    "accept4": 288, "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "kill": 62,
    "ptrace": 101, "mknod": 133, "personality": 135, "pivot_root": 155, "chroot": 161,
    "acct": 163, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
    "init_module": 175, "delete_module": 176, "quotactl": 179, "tkill": 200, "tgkill": 234,
    "rt_sigqueueinfo": 129, "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250,
    "mknodat": 259, "unshare": 272, "rt_tgsigqueueinfo": 297, "perf_event_open": 298,
    "fanotify_init": 300, "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313, "kexec_file_load": 320,
    "bpf": 321, "execveat": 322, "userfaultfd": 323, "pidfd_send_signal": 424,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "mount_setattr": 442,
}
AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO, SECCOMP_RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
EPERM = 1
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x06


class ConfinementError(Exception):
    """The worker could not be isolated: it must not run code."""


def unsupported_reason() -> str | None:
    """Why this machine cannot confine a worker, found without trying (None: it may)."""
    system, machine = os.uname().sysname, os.uname().machine
    if system != "Linux":
        return f"the code sandbox needs Linux namespaces and seccomp, not {system}"
    if machine != "x86_64":
        return f"the code sandbox's seccomp filter is written for x86_64, not {machine}"
    return None


def seccomp_program() -> bytes:
    """The classic-BPF filter: wrong architecture kills, x32 calls and the denied list get EPERM."""
    denied = sorted(DENIED_X86_64.values())
    ops: list[tuple[int, int, int, int]] = [
        (BPF_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (BPF_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        (BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        (BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    checks = [(BPF_JGE_K, X32_SYSCALL_BIT), *((BPF_JEQ_K, nr) for nr in denied)]
    for index, (op, value) in enumerate(checks):
        ops.append((op, len(checks) - index, 0, value))  # true: past the rest and the ALLOW, to ERRNO
    ops += [(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW), (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM)]
    return b"".join(struct.pack("HBBI", *op) for op in ops)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        raise ConfinementError(f"{what}: {os.strerror(ctypes.get_errno())}")


def _mount(libc: ctypes.CDLL, source: str | None, target: str, kind: str | None, flags: int,
           data: str | None = None) -> None:
    def encoded(text: str | None) -> bytes | None:
        return text.encode() if text is not None else None
    _check(libc.mount(encoded(source), target.encode(), encoded(kind), ctypes.c_ulong(flags), encoded(data)),
           f"mount {target}")


def _bind_read_only(libc: ctypes.CDLL, path: str) -> None:
    inside = NEW_ROOT + path
    os.makedirs(inside, exist_ok=True)
    _mount(libc, path, inside, None, MS_BIND | MS_REC)
    _mount(libc, None, inside, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)  # C modules map from it


def enter(uid: int, stdlib: str) -> None:
    """Lock this process in (see the module's docstring). Raises ConfinementError if any step fails."""
    reason = unsupported_reason()
    if reason:
        raise ConfinementError(reason)
    libc = _libc()
    _check(libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    _mount(libc, "sandbox", NEW_ROOT, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"size={SCRATCH_SIZE},mode=0755")
    _bind_read_only(libc, stdlib)
    os.mkdir(NEW_ROOT + SCRATCH, 0o700)
    os.chown(NEW_ROOT + SCRATCH, uid, uid)
    os.chroot(NEW_ROOT)
    os.chdir(SCRATCH)
    _limit(resource.RLIMIT_NPROC, 0)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_FSIZE, 16 * 2**20)
    _limit(resource.RLIMIT_NOFILE, 64)
    # Below the service: code that spins must not starve the rounds and /health (once its uid is
    # dropped it cannot raise its priority again).
    os.nice(NICENESS)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise ConfinementError("setuid did not take")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(no_new_privs)")
    program = seccomp_program()
    filters = ctypes.create_string_buffer(program)
    fprog = struct.pack("HxxxxxxQ", len(program) // 8, ctypes.addressof(filters))
    fprog_buffer = ctypes.create_string_buffer(fprog)
    _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fprog_buffer, 0, 0), "seccomp")


NICENESS = 10


def _limit(which: int, value: int) -> None:
    resource.setrlimit(which, (value, value))


def limit_run(timeout_seconds: float, memory_mb: int) -> None:
    """Tighten the limits to one run's (a confined process may only lower them)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + timeout_seconds) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    _limit(resource.RLIMIT_AS, memory_mb * 2**20)
