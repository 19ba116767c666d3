#!/bin/bash
# Issue 45 (wgpu round two), sixth call, under a minute (`gpu/wgpu_large.gz`
# as for run-45-b.sh): the probe's small half (launches, round trips, a
# 16-byte queue write) and its Philox lab: the uniform fill's WGSL and
# variants of it (64-bit multiply, carry from the low word, unrolled and
# vec4 stores, stores alone, Philox alone) on 64 Mi f32.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 120 gpu/wgpu_large --small ) > $OUT/probe-small.txt 2>&1
cat $OUT/probe-small.txt
