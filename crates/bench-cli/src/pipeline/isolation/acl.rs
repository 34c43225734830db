//! Whether a POSIX access ACL lets a named user or group write a folder: such a folder is
//! shared (a trial uid may leave files there that another user reaches) as much as one
//! whose mode has `o+w`.
//!
//! The ACL is read from the `system.posix_acl_access` extended attribute, whose value the
//! kernel gives in its own binary format (`include/uapi/linux/posix_acl_xattr.h`): a
//! little-endian `u32` version, 2, then 8-byte entries `{u16 tag, u16 perm, u32 id}`.
//! A named entry's permissions are limited by the mask entry.

use rustix::io::Errno;
use std::os::fd::AsFd;
use std::path::Path;

/// The extended attribute holding a file's access ACL.
const ACCESS_ACL: &std::ffi::CStr = c"system.posix_acl_access";
/// The only version the kernel writes.
const VERSION: u32 = 2;
/// An entry naming one user (`u:NAME:rwx`).
const ACL_USER: u16 = 0x02;
/// An entry naming one group (`g:NAME:rwx`).
const ACL_GROUP: u16 = 0x08;
/// The mask: the most any named entry (and the owning group) is granted.
const ACL_MASK: u16 = 0x10;
/// The write permission bit of an entry.
const WRITE: u16 = 0x02;
/// The largest ACL read (510 entries); a larger one is not parsed and counts as open.
const MAX_BYTES: usize = 4096;

/// One entry of an access ACL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AclEntry {
    /// `ACL_USER_OBJ` (0x01), `ACL_USER` (0x02), `ACL_GROUP_OBJ` (0x04), `ACL_GROUP`
    /// (0x08), `ACL_MASK` (0x10) or `ACL_OTHER` (0x20).
    pub tag: u16,
    /// Read 0x04, write 0x02, execute 0x01.
    pub perm: u16,
    /// The user or group id of a named entry.
    pub id: u32,
}

/// An extended attribute value that is not an ACL the kernel writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AclError {
    /// Not a 4-byte header followed by whole 8-byte entries.
    #[error("an ACL of {len} bytes is not a header and whole 8-byte entries")]
    Length {
        /// The value's length.
        len: usize,
    },
    /// A version other than 2.
    #[error("ACL version {version}, not {VERSION}")]
    Version {
        /// The version found.
        version: u32,
    },
}

/// Parses the value of `system.posix_acl_access`.
pub fn parse(bytes: &[u8]) -> Result<Vec<AclEntry>, AclError> {
    let length = AclError::Length { len: bytes.len() };
    let (header, entries) = bytes.split_first_chunk::<4>().ok_or(length.clone())?;
    let version = u32::from_le_bytes(*header);
    if version != VERSION {
        return Err(AclError::Version { version });
    }
    let (entries, rest) = entries.as_chunks::<8>();
    if !rest.is_empty() {
        return Err(length);
    }
    Ok(entries
        .iter()
        .map(|entry| AclEntry {
            tag: u16::from_le_bytes([entry[0], entry[1]]),
            perm: u16::from_le_bytes([entry[2], entry[3]]),
            id: u32::from_le_bytes([entry[4], entry[5], entry[6], entry[7]]),
        })
        .collect())
}

/// Whether a named user or group entry grants writing, once limited by the mask.
pub fn lets_a_named_entry_write(entries: &[AclEntry]) -> bool {
    // The kernel refuses named entries without a mask; were one missing, nothing limits
    // them.
    let mask = entries
        .iter()
        .find(|entry| entry.tag == ACL_MASK)
        .map_or(u16::MAX, |entry| entry.perm);
    entries.iter().any(|entry| {
        (entry.tag == ACL_USER || entry.tag == ACL_GROUP) && entry.perm & mask & WRITE != 0
    })
}

/// What reading the attribute gave: whether its ACL opens writing to a named entry. No
/// ACL (`ENODATA`) or none possible on this file system (`EOPNOTSUPP`): no. An ACL that
/// cannot be read or parsed counts as open: walking a folder more costs time, missing a
/// shared one leaves a trial's files behind.
fn opens(read: Result<usize, Errno>, buffer: &[u8]) -> bool {
    match read {
        Ok(len) => match buffer.get(..len).map(parse) {
            Some(Ok(entries)) => lets_a_named_entry_write(&entries),
            None | Some(Err(_)) => true,
        },
        Err(Errno::NODATA | Errno::NOTSUP) => false,
        Err(_) => true,
    }
}

/// Whether the access ACL of the open file `fd` lets a named user or group write it.
pub fn opens_writing(fd: impl AsFd) -> bool {
    let mut buffer = [0u8; MAX_BYTES];
    let read = rustix::fs::fgetxattr(fd, ACCESS_ACL, &mut buffer[..]);
    opens(read, &buffer)
}

/// [`opens_writing`] for `path`, not following a link.
pub fn path_opens_writing(path: &Path) -> bool {
    let mut buffer = [0u8; MAX_BYTES];
    let read = rustix::fs::lgetxattr(path, ACCESS_ACL, &mut buffer[..]);
    opens(read, &buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes the kernel stores for these `(tag, perm, id)` entries.
    fn acl(entries: &[(u16, u16, u32)]) -> Vec<u8> {
        let mut bytes = VERSION.to_le_bytes().to_vec();
        for &(tag, perm, id) in entries {
            bytes.extend(tag.to_le_bytes());
            bytes.extend(perm.to_le_bytes());
            bytes.extend(id.to_le_bytes());
        }
        bytes
    }

    /// `u::rwx g::r-x o::---` and the given named entries and mask.
    fn folder_acl(named: &[(u16, u16, u32)], mask: u16) -> Vec<AclEntry> {
        let mut entries = vec![(0x01, 7, u32::MAX), (0x04, 5, u32::MAX)];
        entries.extend_from_slice(named);
        entries.extend([(ACL_MASK, mask, u32::MAX), (0x20, 0, u32::MAX)]);
        parse(&acl(&entries)).unwrap()
    }

    #[test]
    fn acl_bytes_parse_to_their_entries() {
        let parsed = parse(&acl(&[(0x01, 7, u32::MAX), (ACL_USER, 6, 1234)])).unwrap();
        assert_eq!(
            parsed,
            [
                AclEntry {
                    tag: 0x01,
                    perm: 7,
                    id: u32::MAX
                },
                AclEntry {
                    tag: ACL_USER,
                    perm: 6,
                    id: 1234
                }
            ]
        );
        assert_eq!(parse(&acl(&[])).unwrap(), []);
    }

    #[test]
    fn a_value_that_is_not_a_version_2_acl_is_an_error() {
        assert_eq!(parse(&[2, 0]), Err(AclError::Length { len: 2 }));
        let mut cut = acl(&[(ACL_USER, 7, 1)]);
        cut.pop();
        assert_eq!(parse(&cut), Err(AclError::Length { len: 11 }));
        let mut version_1 = acl(&[]);
        version_1[0] = 1;
        assert_eq!(parse(&version_1), Err(AclError::Version { version: 1 }));
        // Unreadable ones count as open, so the folder is walked.
        assert!(opens(Ok(2), &[2, 0]));
        assert!(opens(Err(Errno::RANGE), &[]));
        assert!(!opens(Err(Errno::NODATA), &[]));
    }

    #[test]
    fn a_named_user_or_group_with_write_opens_the_folder_unless_the_mask_takes_it() {
        assert!(lets_a_named_entry_write(&folder_acl(
            &[(ACL_USER, 7, 1000)],
            7
        )));
        assert!(lets_a_named_entry_write(&folder_acl(
            &[(ACL_GROUP, 2, 100)],
            7
        )));
        assert!(!lets_a_named_entry_write(&folder_acl(
            &[(ACL_USER, 7, 1000)],
            5
        )));
        assert!(!lets_a_named_entry_write(&folder_acl(
            &[(ACL_USER, 5, 1000)],
            7
        )));
        // The owner, the owning group and others are the mode's bits, not named entries.
        assert!(!lets_a_named_entry_write(&folder_acl(&[], 7)));
    }
}
