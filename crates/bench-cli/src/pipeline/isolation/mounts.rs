//! The machine's mounts, from `/proc/self/mountinfo`: which are local storage a trial can
//! leave files on, and which ignore setuid bits. Both the leftover walk and the setid
//! check read them.

/// File system types that are not local storage a trial can leave files on: pseudo file
/// systems, network file systems (and FUSE, any `fuse.*`, checked apart).
const NOT_LOCAL: [&str; 30] = [
    "proc",
    "sysfs",
    "cgroup",
    "cgroup2",
    "devpts",
    "securityfs",
    "debugfs",
    "tracefs",
    "configfs",
    "pstore",
    "bpf",
    "binfmt_misc",
    "autofs",
    "fusectl",
    "efivarfs",
    "selinuxfs",
    "nsfs",
    "rpc_pipefs",
    "nfsd",
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ceph",
    "glusterfs",
    "afs",
    "9p",
    "lustre",
    "gpfs",
];

/// One line of `/proc/self/mountinfo`: which, where, what type, whether read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The mount id (as `/proc/PID/fdinfo/N` gives it in `mnt_id`).
    pub id: u64,
    /// Mounted `nosuid`: executing a file there ignores its setuid and setgid bits.
    pub nosuid: bool,
    /// The mount point, unescaped.
    pub point: String,
    /// The file system type.
    pub fstype: String,
    /// Mounted read-only (`ro` in the per-mount options).
    pub read_only: bool,
}

impl Mount {
    /// Whether a trial can leave files here: read-write local storage.
    pub fn is_local_writable(&self) -> bool {
        !self.read_only && self.is_local()
    }

    /// Whether this is local storage: not a pseudo, network or FUSE file system, where a
    /// look at a file may wait on a server or on a daemon any user can run.
    pub fn is_local(&self) -> bool {
        !NOT_LOCAL.contains(&self.fstype.as_str())
            && self.fstype != "fuse"
            && !self.fstype.starts_with("fuse.")
            && self.fstype != "fuseblk"
    }
}

/// Parses `/proc/self/mountinfo`: `ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE
/// SOURCE SUPER`, with `\040`-style escapes in the point.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split(' ').collect();
            let id = fields.first()?.parse().ok()?;
            let point = unescape_octal(fields.get(4)?);
            let read_only = fields.get(5)?.split(',').any(|o| o == "ro");
            let nosuid = fields.get(5)?.split(',').any(|o| o == "nosuid");
            let fstype = right.split(' ').next()?.to_owned();
            Some(Mount {
                id,
                nosuid,
                point,
                fstype,
                read_only,
            })
        })
        .collect()
}

fn unescape_octal(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let digit = |at: usize| u32::from(bytes[at] - b'0');
            let value = digit(i + 1) * 64 + digit(i + 2) * 8 + digit(i + 3);
            out.push(u8::try_from(value).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The local read-write mounts of this machine.
pub fn local_mounts() -> Vec<Mount> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    parse_mountinfo(&text)
        .into_iter()
        .filter(Mount::is_local_writable)
        .collect()
}
