"""PyTorch beside kiln's multi-GPU bench (examples/collectives.rs), timed the same way.

Usage: python3 torch_nccl_bench.py --json OUT [--max-bytes N]
All-reduce through torch.distributed (NCCL backend, one process per GPU,
sum of float32), sizes 4 B to --max-bytes by factors of 4, each checked
once, then `iters` calls between two synchronizations on the host clock;
bus bandwidth as NCCL's tests define it (algbw * 2 (n - 1) / n). Then
copies between each pair of GPUs (`dst.copy_(src)`, cudaMemcpyPeerAsync).
Writes JSON lines like the example's. NVLink multicast stays off.
"""
import argparse, json, os, socket, sys, time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402


def sizes(top):
    out, s = [], 4
    while s <= top:
        out.append(s)
        s *= 4
    return out


def iters(nbytes):
    return max(5, min(100, (256 << 20) // max(nbytes, 1)))


def worker(rank, world, port, top, out):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    rows = []
    for nbytes in sizes(top):
        n = nbytes // 4
        x = (torch.arange(n, device="cuda", dtype=torch.int64) % 64 + rank).to(torch.float32)
        want = (torch.arange(n, device="cuda", dtype=torch.int64) % 64).to(torch.float32) * world + world * (world - 1) / 2
        dist.all_reduce(x)
        torch.cuda.synchronize()
        if not torch.equal(x, want):
            raise SystemExit(f"all_reduce of {nbytes} bytes: rank {rank} differs from the host")
        for _ in range(3):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        k = iters(nbytes)
        t0 = time.perf_counter()
        for _ in range(k):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        t = (time.perf_counter() - t0) / k
        algbw = nbytes / t / 1e9
        rows.append({"mode": "torch.distributed", "collective": "all_reduce", "ranks": world, "bytes": nbytes,
                     "seconds": t, "algbw_gb_s": algbw, "busbw_gb_s": algbw * 2 * (world - 1) / world})
    dist.destroy_process_group()
    if rank == 0:
        with open(out, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in rows))


def peer(top):
    rows = []
    world = torch.cuda.device_count()
    for src in range(world):
        for dst in range(world):
            if src == dst:
                continue
            for nbytes in [b for b in sizes(top) if b >= 4096]:
                n = nbytes // 4
                a = torch.arange(n, device=f"cuda:{src}", dtype=torch.float32)
                b = torch.full((n,), float("nan"), device=f"cuda:{dst}")
                b.copy_(a)
                torch.cuda.synchronize(dst)
                if not torch.equal(b.cpu(), a.cpu()):
                    raise SystemExit(f"peer copy {src} -> {dst} of {nbytes} bytes differs")
                k = iters(nbytes)
                torch.cuda.synchronize(src)
                torch.cuda.synchronize(dst)
                t0 = time.perf_counter()
                with torch.cuda.device(dst):
                    for _ in range(k):
                        b.copy_(a)
                torch.cuda.synchronize(dst)
                torch.cuda.synchronize(src)
                rows.append({"mode": "torch peer", "src": src, "dst": dst, "bytes": nbytes,
                             "gb_s": nbytes * k / (time.perf_counter() - t0) / 1e9})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    args = ap.parse_args()
    world = torch.cuda.device_count()
    if world < 1:
        print("torch sees no GPU", file=sys.stderr)
        sys.exit(3)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    part = args.json + ".allreduce"
    mp.spawn(worker, args=(world, port, args.max_bytes, part), nprocs=world, join=True)
    with open(part) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    os.remove(part)
    rows += peer(args.max_bytes)
    with open(args.json, "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    print(f"torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, {world} GPUs")
    for r in rows:
        if "busbw_gb_s" in r:
            print(f"all_reduce {r['bytes']:>12} bytes {r['seconds'] * 1e6:>10.1f} us {r['busbw_gb_s']:>8.2f} GB/s busbw")
        else:
            print(f"peer {r['src']} -> {r['dst']} {r['bytes']:>12} bytes {r['gb_s']:>8.2f} GB/s")


if __name__ == "__main__":
    main()
