/*
 * autoenv's resident exec helper: PID 1 of every local sandbox.
 *
 * Why: a trial runs two dozen commands and file transfers in its sandboxes, and `runc exec` costs 30-50 ms
 * each (a Go binary, a re-exec of runc init, a seccomp filter compiled per call). This program is the
 * container's init: runc starts it once, with the container's full confinement (namespaces, cgroup, seccomp
 * filter, capability bounding set, rlimits), and every command is a plain fork/exec of it, which inherits all of
 * that. Commands as another user drop to that user with setgroups/setgid/setuid (a non-root user keeps no
 * capability, as under Docker).
 *
 * The channel is the pipe pair runc hands to a detached container's init (its stdin and stdout): no socket, no
 * path on the host. Only root in the sandbox can reach /proc/1/fd; in the container that decides a reward the
 * agent's code runs as another user (autoenv.grading), and in the agent's own container root is the agent,
 * who can only lie about its own work, which it could already do by replacing the image's tar.
 *
 * Frames, both ways: u32 payload length (little-endian), u8 kind, u32 request id, payload.
 *   host -> helper  'X' start: NUL-terminated fields: stdin ("0" /dev/null, "1" a pipe), uid, gid,
 *                       groups (comma-separated), cwd, argc, argv..., envc, env...
 *                   'I' bytes for the request's stdin;  'E' end of its stdin
 *                   'K' kill the request's process group (SIGKILL): the host gave up on its output (a bound)
 *   helper -> host  'O' stdout bytes;  'R' stderr bytes;  'Z' the request ended: its exit status as text
 *                       (the code, or 128 + the signal), once the process is reaped and both outputs closed
 *                   'H' hello, id 0, sent once at start
 * A command that cannot start writes why on its stderr and ends with 127 (not found), 126 (not executable) or
 * 255 (the user or the folder could not be set), like runc exec.
 * The helper ends when the host's end of its stdin closes; the container (and everything in it) ends with it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct req {
    uint32_t id;
    pid_t pid;
    int in_fd, out_fd, err_fd;
    char *in_buf;
    size_t in_len, in_off;
    int in_eof, reaped, status;
    struct req *next;
};

static struct req *reqs;
static int nreqs;

static void die(const char *what) {
    /* nothing to tell: the host sees the pipe close and reports a sandbox fault */
    (void)what;
    _exit(1);
}

static void write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("write");
        }
        p += n;
        len -= (size_t)n;
    }
}

static void send_frame(char kind, uint32_t id, const void *data, uint32_t len) {
    unsigned char head[9];
    head[0] = len & 0xff; head[1] = (len >> 8) & 0xff; head[2] = (len >> 16) & 0xff; head[3] = (len >> 24) & 0xff;
    head[4] = (unsigned char)kind;
    head[5] = id & 0xff; head[6] = (id >> 8) & 0xff; head[7] = (id >> 16) & 0xff; head[8] = (id >> 24) & 0xff;
    write_all(1, head, sizeof head);
    if (len) write_all(1, data, len);
}

static struct req *find(uint32_t id) {
    for (struct req *r = reqs; r; r = r->next)
        if (r->id == id) return r;
    return NULL;
}

static void set_nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

/* HOME as runc sets it when the environment has none: the user's home in the sandbox's /etc/passwd, else "/" */
static char *home_of(uid_t uid) {
    static char line[4096], out[4200];
    FILE *f = fopen("/etc/passwd", "re");
    const char *home = "/";
    if (f) {
        while (fgets(line, sizeof line, f)) {
            char *field[7] = {0};
            int n = 0;
            char *s = line;
            for (char *t = strsep(&s, ":"); t && n < 7; t = strsep(&s, ":")) field[n++] = t;
            if (n >= 6 && field[2] && (uid_t)strtoul(field[2], NULL, 10) == uid && field[2][0]) {
                home = field[5];
                break;
            }
        }
    }
    snprintf(out, sizeof out, "HOME=%s", home);
    if (f) fclose(f);
    return out;
}

static void child(char **fields, int nfields, int in_fd, int out_fd, int err_fd) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    setsid();
    if (in_fd < 0) in_fd = open("/dev/null", O_RDONLY);
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(255);
    if (nfields < 7) _exit(255);
    uid_t uid = (uid_t)strtoul(fields[1], NULL, 10);
    gid_t gid = (gid_t)strtoul(fields[2], NULL, 10);
    gid_t groups[64];
    int ngroups = 0;
    for (char *s = fields[3], *t; (t = strsep(&s, ",")) && ngroups < 64;)
        if (*t) groups[ngroups++] = (gid_t)strtoul(t, NULL, 10);
    const char *cwd = fields[4];
    int argc = atoi(fields[5]);
    if (argc < 1 || 6 + argc >= nfields) _exit(255);
    char **argv = &fields[6];
    int envc = atoi(fields[6 + argc]);
    if (envc < 0 || 7 + argc + envc > nfields) _exit(255);
    char **env = calloc((size_t)envc + 2, sizeof(char *));
    int has_home = 0;
    for (int i = 0; i < envc; i++) {
        env[i] = fields[7 + argc + i];
        if (strncmp(env[i], "HOME=", 5) == 0) has_home = 1;
    }
    if (!has_home) env[envc++] = home_of(uid);
    env[envc] = NULL;
    argv[argc] = NULL; /* the envc field's slot: argv is NULL-terminated in place */
    if (setgroups((size_t)ngroups, groups) < 0 || setgid(gid) < 0 || setuid(uid) < 0) {
        dprintf(2, "autoenv-exec: cannot become user %u:%u: %s\n", uid, gid, strerror(errno));
        _exit(255);
    }
    if (chdir(cwd) < 0) {
        dprintf(2, "autoenv-exec: chdir to cwd (\"%s\") failed: %s\n", cwd, strerror(errno));
        _exit(255);
    }
    environ = env;
    execvp(argv[0], argv);
    int code = errno == ENOENT ? 127 : 126;
    dprintf(2, "autoenv-exec: exec: \"%s\": %s\n", argv[0], strerror(errno));
    _exit(code);
}

static void start(uint32_t id, char *payload, uint32_t len) {
    char *fields[4096];
    int n = 0;
    for (uint32_t i = 0, begin = 0; i < len && n < 4095; i++)
        if (payload[i] == '\0') { fields[n++] = payload + begin; begin = i + 1; }
    fields[n] = NULL;
    int in[2] = {-1, -1}, out[2], err[2];
    int want_stdin = n > 0 && fields[0][0] == '1';
    if ((want_stdin && pipe2(in, O_CLOEXEC) < 0) || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
        const char *msg = "autoenv-exec: out of file descriptors\n";
        send_frame('R', id, msg, (uint32_t)strlen(msg));
        send_frame('Z', id, "255", 3);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) child(fields, n, in[0], out[1], err[1]);
    if (in[0] >= 0) close(in[0]);
    close(out[1]);
    close(err[1]);
    struct req *r = calloc(1, sizeof *r);
    r->id = id;
    r->pid = pid;
    r->in_fd = in[1];
    r->out_fd = out[0];
    r->err_fd = err[0];
    if (pid < 0) {
        const char *msg = "autoenv-exec: fork failed\n";
        send_frame('R', id, msg, (uint32_t)strlen(msg));
        r->reaped = 1;
        r->status = 255 << 8;
    }
    if (r->in_fd >= 0) set_nonblock(r->in_fd);
    set_nonblock(r->out_fd);
    set_nonblock(r->err_fd);
    r->next = reqs;
    reqs = r;
    nreqs++;
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static void on_frame(char kind, uint32_t id, char *payload, uint32_t len) {
    struct req *r;
    switch (kind) {
    case 'X':
        start(id, payload, len);
        break;
    case 'I':
        if ((r = find(id)) && r->in_fd >= 0) {
            r->in_buf = realloc(r->in_buf, r->in_len + len);
            memcpy(r->in_buf + r->in_len, payload, len);
            r->in_len += len;
        }
        break;
    case 'E':
        if ((r = find(id))) r->in_eof = 1;
        break;
    case 'K':
        /* each command is its own session and process group (setsid in child): kill all it started */
        if ((r = find(id)) && r->pid > 0 && !r->reaped) kill(-r->pid, SIGKILL);
        break;
    default:
        die("unknown frame");
    }
}

static void pump_stdin(struct req *r) {
    while (r->in_fd >= 0 && r->in_off < r->in_len) {
        ssize_t n = write(r->in_fd, r->in_buf + r->in_off, r->in_len - r->in_off);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) return;
            close_fd(&r->in_fd); /* the command stopped reading (EPIPE): drop the rest, as a pipe would */
            break;
        }
        r->in_off += (size_t)n;
    }
    if (r->in_off >= r->in_len) {
        free(r->in_buf);
        r->in_buf = NULL;
        r->in_len = r->in_off = 0;
        if (r->in_eof) close_fd(&r->in_fd);
    }
}

static void drain(struct req *r, int *fd, char kind) {
    static char buf[65536];
    for (;;) {
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n > 0) { send_frame(kind, r->id, buf, (uint32_t)n); continue; }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        close_fd(fd);
        return;
    }
}

static void reap(void) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        for (struct req *r = reqs; r; r = r->next)
            if (r->pid == pid) { r->reaped = 1; r->status = status; }
}

static void finish_done(void) {
    for (struct req **p = &reqs; *p;) {
        struct req *r = *p;
        if (r->reaped && r->out_fd < 0 && r->err_fd < 0) {
            char code[16];
            int c = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : WIFSIGNALED(r->status) ? 128 + WTERMSIG(r->status) : 255;
            int n = snprintf(code, sizeof code, "%d", c);
            send_frame('Z', r->id, code, (uint32_t)n);
            close_fd(&r->in_fd);
            free(r->in_buf);
            *p = r->next;
            free(r);
            nreqs--;
        } else {
            p = &r->next;
        }
    }
}

int main(void) {
    /* never hold a file of the host's: the log runc gave us as stderr is the host's */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) dup2(null, 2);
    signal(SIGPIPE, SIG_IGN);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0) die("signalfd");
    fcntl(0, F_SETFD, FD_CLOEXEC);
    fcntl(1, F_SETFD, FD_CLOEXEC);
    send_frame('H', 0, "autoenv-exec 1", 14);

    size_t cap = 1 << 20, have = 0;
    unsigned char *in = malloc(cap);
    int host_open = 1;
    while (host_open || nreqs) {
        struct pollfd pfd[2 + 3 * 1024];
        struct req *slot[2 + 3 * 1024];
        int n = 0;
        pfd[n].fd = sfd; pfd[n].events = POLLIN; slot[n++] = NULL;
        if (host_open) { pfd[n].fd = 0; pfd[n].events = POLLIN; slot[n++] = NULL; }
        for (struct req *r = reqs; r && n < (int)(sizeof pfd / sizeof pfd[0]) - 3; r = r->next) {
            if (r->out_fd >= 0) { pfd[n].fd = r->out_fd; pfd[n].events = POLLIN; slot[n++] = r; }
            if (r->err_fd >= 0) { pfd[n].fd = r->err_fd; pfd[n].events = POLLIN; slot[n++] = r; }
            if (r->in_fd >= 0 && (r->in_len > r->in_off || r->in_eof)) {
                pfd[n].fd = r->in_fd; pfd[n].events = POLLOUT; slot[n++] = r;
            }
        }
        if (poll(pfd, (nfds_t)n, -1) < 0) {
            if (errno == EINTR) continue;
            die("poll");
        }
        for (int i = 0; i < n; i++) {
            if (!pfd[i].revents) continue;
            if (pfd[i].fd == sfd) {
                struct signalfd_siginfo info;
                while (read(sfd, &info, sizeof info) > 0) {}
                reap();
            } else if (!slot[i]) {
                if (have == cap) in = realloc(in, cap *= 2);
                ssize_t got = read(0, in + have, cap - have);
                if (got <= 0) {
                    if (got < 0 && errno == EINTR) continue;
                    _exit(0); /* the host is gone: the container ends with its init */
                }
                have += (size_t)got;
                size_t off = 0;
                while (have - off >= 9) {
                    uint32_t len = in[off] | in[off + 1] << 8 | in[off + 2] << 16 | (uint32_t)in[off + 3] << 24;
                    if (have - off - 9 < len) {
                        if (len + 9 > cap) { in = realloc(in, len + 9 + off); cap = len + 9 + off; }
                        break;
                    }
                    uint32_t id = in[off + 5] | in[off + 6] << 8 | in[off + 7] << 16 | (uint32_t)in[off + 8] << 24;
                    on_frame((char)in[off + 4], id, (char *)in + off + 9, len);
                    off += 9 + len;
                }
                memmove(in, in + off, have - off);
                have -= off;
            } else {
                struct req *r = slot[i];
                if (pfd[i].fd == r->out_fd) drain(r, &r->out_fd, 'O');
                else if (pfd[i].fd == r->err_fd) drain(r, &r->err_fd, 'R');
                else if (pfd[i].fd == r->in_fd) pump_stdin(r);
            }
        }
        for (struct req *r = reqs; r; r = r->next)
            if (r->in_fd >= 0 && r->in_eof && r->in_off >= r->in_len) close_fd(&r->in_fd);
        finish_done();
    }
    return 0;
}
