//! NCCL communicators: one rank ([`Comm`], joined by a [`UniqueId`]) or every
//! rank of one process ([`Comms`], one per device).

use std::ffi::c_int;

use cudarc::nccl::sys::{ncclComm_t, ncclUniqueId};
use kiln_core::{Device, Error, Result};

use super::library::{nccl, Nccl};
use crate::Cuda;

/// The id that joins the ranks of one communicator: made once
/// ([`UniqueId::new`]), its bytes sent to every rank by any means (a file, a
/// socket, MPI), each rank giving it to [`Comm::join`].
///
/// # Examples
/// ```
/// use kiln_cuda::nccl::UniqueId;
/// // Without an NCCL library an id cannot be made, and the error says why.
/// match UniqueId::new() {
///     Ok(id) => assert_eq!(UniqueId::from_bytes(&id.to_bytes())?, id),
///     Err(e) => assert!(e.to_string().contains("NCCL"), "{e}"),
/// }
/// assert!(UniqueId::from_bytes(&[0; 7]).is_err());
/// # Ok::<(), kiln_core::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UniqueId(ncclUniqueId);

impl UniqueId {
    /// Bytes in an id.
    pub const BYTES: usize = 128;

    /// A new id (`ncclGetUniqueId`), for one communicator.
    pub fn new() -> Result<Self> {
        let lib = nccl()?;
        let mut id = ncclUniqueId { internal: [0; Self::BYTES] };
        // SAFETY: ncclGetUniqueId writes one id.
        lib.check(unsafe { (lib.get_unique_id)(&mut id) }, "ncclGetUniqueId")?;
        Ok(UniqueId(id))
    }

    /// The id's bytes, to send to the other ranks.
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        self.0.internal.map(|c| c as u8)
    }

    /// The id another rank made, from its bytes ([`BYTES`](Self::BYTES) of them).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let bytes: &[u8; Self::BYTES] = bytes.try_into().map_err(|_| {
            Error::invalid("UniqueId::from_bytes", format!("{} bytes; an NCCL id has {}", bytes.len(), Self::BYTES))
        })?;
        Ok(UniqueId(ncclUniqueId { internal: bytes.map(|b| b as _) }))
    }
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let head: String = self.to_bytes()[..8].iter().map(|b| format!("{b:02x}")).collect();
        write!(f, "UniqueId({head}..)")
    }
}

/// One rank of an NCCL communicator, on one CUDA device.
///
/// Its collectives ([`all_reduce`](Self::all_reduce) and the others, in
/// `collective.rs`) enqueue on a stream of that device and return at once;
/// every rank must call the same collectives in the same order with the
/// same element type and counts. Before each, unless
/// [`set_checked(false)`](Self::set_checked), the ranks exchange what they
/// are about to run (one 40-byte all-gather, read back: the call then waits
/// for the stream), so that ranks that disagree get an `Err` naming the rank
/// and what differs instead of a hang or wrong data.
///
/// A communicator is used by one thread at a time (NCCL's rule), so `Comm`
/// is `Send` but not `Sync`. Dropping it destroys the communicator.
pub struct Comm {
    pub(crate) raw: ncclComm_t,
    pub(crate) device: Device<Cuda>,
    pub(crate) rank: usize,
    pub(crate) size: usize,
    pub(crate) lib: &'static Nccl,
    pub(crate) checked: bool,
}

// SAFETY: an NCCL communicator may move between threads; it is not used by
// two at once because `Comm` is not `Sync` and its methods take `&self`
// from one thread (a `&Comm` cannot cross threads).
unsafe impl Send for Comm {}

impl Comm {
    /// Join, as `rank` of `size`, the communicator of `id`, on `device`
    /// (`ncclCommInitRank`). Blocks until every rank has joined.
    pub fn join(device: &Device<Cuda>, id: &UniqueId, rank: usize, size: usize) -> Result<Comm> {
        let what = format!("Comm::join (rank {rank} of {size}) on {}", device.name());
        if size == 0 || rank >= size || size > c_int::MAX as usize {
            return Err(Error::invalid(what, format!("rank {rank} is not below a size of {size}")));
        }
        let lib = nccl()?;
        device.check_usable()?;
        device.raw().state().bind("ncclCommInitRank")?;
        let mut raw: ncclComm_t = std::ptr::null_mut();
        // SAFETY: the device's context is current; NCCL writes the communicator.
        let status = unsafe { (lib.comm_init_rank)(&mut raw, size as c_int, id.0, rank as c_int) };
        lib.check(status, &format!("ncclCommInitRank ({what})"))?;
        Ok(Comm { raw, device: device.clone(), rank, size, lib, checked: true })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The device this rank runs on.
    pub fn device(&self) -> &Device<Cuda> {
        &self.device
    }

    /// Whether collectives first check that every rank runs the same one
    /// (on by default; see the type's docs). With one rank there is nothing
    /// to check and no exchange.
    pub fn set_checked(&mut self, checked: bool) {
        self.checked = checked;
    }

    /// An error NCCL has noted on this communicator since (a peer lost, a
    /// network failure), if any (`ncclCommGetAsyncError`).
    pub fn async_error(&self) -> Result<()> {
        let mut status = 0;
        // SAFETY: a live communicator; NCCL writes one status.
        let call = unsafe { (self.lib.comm_get_async_error)(self.raw, &mut status) };
        self.lib.check(call, "ncclCommGetAsyncError")?;
        self.lib.check(status, &format!("NCCL communicator (rank {} of {})", self.rank, self.size))
    }
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Comm(rank {} of {} on {})", self.rank, self.size, self.device.name())
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // Errors here have nowhere to go; the next call on the device reports
        // a fault the destroy met.
        if self.device.raw().state().bind("ncclCommDestroy").is_ok() {
            // SAFETY: a live communicator, destroyed once.
            let _ = unsafe { (self.lib.comm_destroy)(self.raw) };
        }
    }
}

/// Every rank of one communicator in this process, one per device, rank i
/// on `devices[i]` (`ncclCommInitAll`): one thread drives them all, and the
/// collectives of [`Comms`] (in `collective.rs`) run each rank's part in
/// one NCCL group, after checking that the parts agree.
pub struct Comms {
    pub(crate) ranks: Vec<Comm>,
}

impl Comms {
    /// A communicator over `devices` (distinct CUDA devices; one is allowed).
    pub fn new(devices: &[Device<Cuda>]) -> Result<Comms> {
        let what = "Comms::new";
        if devices.is_empty() {
            return Err(Error::invalid(what, "no devices"));
        }
        for (i, a) in devices.iter().enumerate() {
            if let Some(j) = devices[..i].iter().position(|b| b.info().ordinal == a.info().ordinal) {
                return Err(Error::invalid(
                    what,
                    format!(
                        "devices {j} and {i} are both CUDA device {} (NCCL takes each device once)",
                        a.info().ordinal
                    ),
                ));
            }
        }
        let lib = nccl()?;
        for d in devices {
            d.check_usable()?;
        }
        let ordinals: Vec<c_int> = devices.iter().map(|d| d.info().ordinal as c_int).collect();
        let mut raws: Vec<ncclComm_t> = vec![std::ptr::null_mut(); devices.len()];
        // SAFETY: NCCL writes one communicator per listed device.
        let status = unsafe { (lib.comm_init_all)(raws.as_mut_ptr(), devices.len() as c_int, ordinals.as_ptr()) };
        lib.check(status, &format!("ncclCommInitAll over CUDA devices {ordinals:?}"))?;
        let size = devices.len();
        let ranks = raws
            .into_iter()
            .zip(devices)
            .enumerate()
            .map(|(rank, (raw, d))| Comm { raw, device: d.clone(), rank, size, lib, checked: false })
            .collect();
        Ok(Comms { ranks })
    }

    /// The ranks, rank i at index i.
    pub fn ranks(&self) -> &[Comm] {
        &self.ranks
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.ranks.len()
    }
}

impl std::fmt::Debug for Comms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.ranks).finish()
    }
}
