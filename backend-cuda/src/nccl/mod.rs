//! Collectives through NCCL: all-reduce, reduce, broadcast, all-gather and
//! reduce-scatter on kiln buffers and streams (CuPy's `cupy.cuda.nccl`).
//!
//! NCCL is loaded at run time, like the driver ([`nccl_available`]; where
//! it is looked for: `library.rs`, or set [`NCCL_LIBRARY_ENV`]); without it
//! these calls return an `Unsupported` error that says so, and the rest of
//! kiln works as before.
//!
//! - One process driving several devices: [`Comms::new`] over the devices,
//!   then each collective of [`Comms`] takes every rank's stream and buffers
//!   and runs them in one NCCL group.
//! - One rank per process (or thread): one rank makes a [`UniqueId`], sends
//!   its bytes to the others, and each joins with [`Comm::join`]; each rank
//!   then calls the same collectives in the same order.
//!
//! A collective enqueues on the stream given and returns; the buffers'
//! memory outlives it as it does any other work on a stream. Ranks that
//! disagree (counts, element types, the collective, its root) get an error
//! naming the rank and what differs: [`Comms`] compares its ranks' parts
//! before enqueuing any; a [`Comm`] exchanges what it is about to run with
//! the other ranks first (unless [`Comm::set_checked`] turns that off).
//!
//! # Examples
//! ```no_run
//! use kiln_core::Device;
//! use kiln_cuda::nccl::{Comms, ReduceOp};
//! use kiln_cuda::Cuda;
//! # fn main() -> kiln_core::Result<()> {
//! let devices = Device::<Cuda>::list()?
//!     .iter()
//!     .map(|d| Device::<Cuda>::open(d.ordinal))
//!     .collect::<kiln_core::Result<Vec<_>>>()?;
//! let comms = Comms::new(&devices)?;
//! let streams: Vec<_> = devices.iter().map(|d| d.stream()).collect();
//! // Rank i holds [i; 4]; every rank gets the sum over ranks.
//! let send = devices.iter().enumerate().map(|(i, d)| d.upload(&[i as f32; 4])).collect::<kiln_core::Result<Vec<_>>>()?;
//! let mut recv = streams.iter().map(|s| s.alloc::<f32>(4)).collect::<kiln_core::Result<Vec<_>>>()?;
//! comms.all_reduce(&streams, &send, &mut recv, ReduceOp::Sum)?;
//! let n = devices.len() as f32;
//! assert_eq!(recv[0].to_vec()?, vec![n * (n - 1.0) / 2.0; 4]);
//! # Ok(()) }
//! ```

mod collective;
mod comm;
mod library;

pub use collective::ReduceOp;
pub use comm::{Comm, Comms, UniqueId};
pub use library::{nccl_available, nccl_version, NCCL_LIBRARY_ENV};
