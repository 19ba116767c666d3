//! NCCL collectives on kiln buffers: every collective on a one-rank
//! communicator (both kinds) with results checked against the input, views
//! at offsets, several element types, and bad input refused before anything
//! is enqueued. Without NCCL (or without a GPU) the calls must say why.

use kiln_core::{Device, Error};
use kiln_cuda::nccl::{nccl_available, nccl_version, Comm, Comms, ReduceOp, UniqueId};
use kiln_cuda::Cuda;

use super::common::*;

/// The GPU and NCCL, or a note why the test has nothing to run.
fn gpu_with_nccl() -> Option<Device<Cuda>> {
    let dev = gpu()?;
    match nccl_version() {
        Ok((version, path)) => {
            eprintln!("NCCL {version} from {path}");
            Some(dev)
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

#[test]
fn without_nccl_calls_say_so() {
    if nccl_available() {
        return;
    }
    let err = UniqueId::new().unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("NCCL") && err.to_string().contains("KILN_NCCL_LIBRARY"), "{err}");
    if let Some(dev) = gpu() {
        assert!(Comms::new(&[dev]).is_err());
    }
}

#[test]
fn unique_ids_round_trip_through_bytes() {
    if gpu_with_nccl().is_none() {
        return;
    }
    let (a, b) = (UniqueId::new().unwrap(), UniqueId::new().unwrap());
    assert_ne!(a, b);
    assert_eq!(UniqueId::from_bytes(&a.to_bytes()).unwrap(), a);
    assert!(UniqueId::from_bytes(&a.to_bytes()[..100]).is_err());
}

/// Every collective of one rank, whose results are its own input.
fn one_rank_collectives(comm: &Comm, seed: u64) {
    let dev = comm.device().clone();
    let s = dev.create_stream(kiln_core::Priority::Normal).unwrap();
    for n in [1usize, 1000, 1 << 20] {
        let data = random_f32(seed + n as u64, n + 5);
        let send = s.upload(&data).unwrap();
        let src = send.slice(5..).unwrap(); // a view at an offset
        let want = &data[5..];
        for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Avg] {
            let mut recv = s.upload(&vec![POISON_F32; n + 3]).unwrap();
            comm.all_reduce(&s, &src, &mut recv.slice_mut(3..).unwrap(), op).unwrap();
            let got = recv.to_vec().unwrap();
            assert_eq!(&got[..3], &[POISON_F32; 3], "all_reduce wrote before its range");
            assert_eq!(&got[3..], want, "all_reduce {op:?} n={n}");
        }
        let mut out = s.upload(&vec![POISON_F32; n]).unwrap();
        comm.reduce(&s, &src, &mut out, ReduceOp::Sum, 0).unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "reduce n={n}");
        out.fill(POISON_F32).unwrap();
        comm.broadcast(&s, &src, &mut out, 0).unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "broadcast n={n}");
        out.fill(POISON_F32).unwrap();
        comm.all_gather(&s, &src, &mut out).unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "all_gather n={n}");
        out.fill(POISON_F32).unwrap();
        comm.reduce_scatter(&s, &src, &mut out, ReduceOp::Prod).unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "reduce_scatter n={n}");
        let mut inplace = s.upload(want).unwrap();
        comm.all_reduce_in_place(&s, &mut inplace, ReduceOp::Min).unwrap();
        comm.broadcast_in_place(&s, &mut inplace, 0).unwrap();
        assert_eq!(inplace.to_vec().unwrap(), want, "in place n={n}");
    }
    // Other element types.
    let ints: Vec<i32> = (0..4099).map(|i| i * 7 - 9000).collect();
    let send = s.upload(&ints).unwrap();
    let mut recv = s.upload(&vec![-1i32; ints.len()]).unwrap();
    comm.all_reduce(&s, &send, &mut recv, ReduceOp::Sum).unwrap();
    assert_eq!(recv.to_vec().unwrap(), ints);
    let wide: Vec<f64> = (0..777).map(|i| i as f64 / 3.0).collect();
    let send = s.upload(&wide).unwrap();
    let mut recv = s.alloc::<f64>(wide.len()).unwrap();
    comm.all_gather(&s, &send, &mut recv).unwrap();
    assert_eq!(recv.to_vec().unwrap(), wide);
    s.synchronize().unwrap();
}

#[test]
fn one_rank_joined_by_id_runs_every_collective() {
    let Some(dev) = gpu_with_nccl() else { return };
    let id = UniqueId::new().unwrap();
    let comm = Comm::join(&dev, &id, 0, 1).unwrap();
    assert_eq!((comm.rank(), comm.size()), (0, 1));
    one_rank_collectives(&comm, 10);
    comm.async_error().unwrap();
}

#[test]
fn one_process_communicator_runs_every_collective() {
    let Some(dev) = gpu_with_nccl() else { return };
    let comms = Comms::new(std::slice::from_ref(&dev)).unwrap();
    assert_eq!(comms.size(), 1);
    one_rank_collectives(&comms.ranks()[0], 20);
    // The grouped forms.
    let streams = vec![dev.stream()];
    let data = random_f32(30, 4096);
    let send = vec![dev.upload(&data).unwrap()];
    let mut recv = vec![dev.upload(&vec![POISON_F32; 4096]).unwrap()];
    comms.all_reduce(&streams, &send, &mut recv, ReduceOp::Sum).unwrap();
    assert_eq!(recv[0].to_vec().unwrap(), data);
    recv[0].fill(POISON_F32).unwrap();
    comms.reduce(&streams, &send, &mut recv, ReduceOp::Max, 0).unwrap();
    assert_eq!(recv[0].to_vec().unwrap(), data);
    recv[0].fill(POISON_F32).unwrap();
    comms.broadcast(&streams, &send, &mut recv, 0).unwrap();
    assert_eq!(recv[0].to_vec().unwrap(), data);
    recv[0].fill(POISON_F32).unwrap();
    comms.all_gather(&streams, &send, &mut recv).unwrap();
    assert_eq!(recv[0].to_vec().unwrap(), data);
    recv[0].fill(POISON_F32).unwrap();
    comms.reduce_scatter(&streams, &send, &mut recv, ReduceOp::Sum).unwrap();
    assert_eq!(recv[0].to_vec().unwrap(), data);
    comms.all_reduce_in_place(&streams, &mut recv, ReduceOp::Sum).unwrap();
    assert_eq!(recv[0].to_vec().unwrap(), data);
}

#[test]
fn bad_collectives_are_refused_before_anything_runs() {
    let Some(dev) = gpu_with_nccl() else { return };
    assert!(Comms::new(&[]).is_err());
    let twice = Comms::new(&[dev.clone(), dev.clone()]).unwrap_err();
    assert!(twice.to_string().contains("both CUDA device"), "{twice}");
    assert!(Comm::join(&dev, &UniqueId::new().unwrap(), 1, 1).is_err(), "rank past the size");
    let comms = Comms::new(std::slice::from_ref(&dev)).unwrap();
    let comm = &comms.ranks()[0];
    let s = dev.stream();
    let send = s.upload(&[1.0f32; 8]).unwrap();
    let mut short = s.upload(&[POISON_F32; 7]).unwrap();
    let err = comm.all_reduce(&s, &send, &mut short, ReduceOp::Sum).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { expected: 8, actual: 7, .. }), "{err}");
    assert_eq!(short.to_vec().unwrap(), vec![POISON_F32; 7], "nothing ran");
    let mut out = s.alloc::<f32>(8).unwrap();
    let err = comm.broadcast(&s, &send, &mut out, 1).unwrap_err();
    assert!(err.to_string().contains("root 1"), "{err}");
    // A buffer of another opened device (kiln counts each open apart).
    let other = Device::<Cuda>::open(dev.info().ordinal).unwrap();
    let foreign = other.upload(&[1.0f32; 8]).unwrap();
    let err = comm.all_reduce(&s, &foreign, &mut out, ReduceOp::Sum).unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
    // Grouped: a rank list that does not match the communicator.
    let streams = vec![s.clone(), s.clone()];
    let sends = vec![s.upload(&[1.0f32; 8]).unwrap(), s.upload(&[1.0f32; 8]).unwrap()];
    let mut recvs = vec![s.alloc::<f32>(8).unwrap(), s.alloc::<f32>(8).unwrap()];
    assert!(comms.all_reduce(&streams, &sends, &mut recvs, ReduceOp::Sum).is_err());
}
