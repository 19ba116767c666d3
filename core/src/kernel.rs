//! Compiled kernels.

use std::sync::Arc;

use crate::{Backend, RawKernel};

/// A compiled entry point, ready to launch with [`Stream::launch`](crate::Stream::launch).
/// Obtained from [`Device::kernel`](crate::Device::kernel); cheap to clone.
pub struct Kernel<B: Backend> {
    raw: Arc<B::Kernel>,
    device: u64,
}

impl<B: Backend> Clone for Kernel<B> {
    fn clone(&self) -> Self {
        Kernel { raw: self.raw.clone(), device: self.device }
    }
}

impl<B: Backend> std::fmt::Debug for Kernel<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kernel({}, {})", B::KIND, self.name())
    }
}

impl<B: Backend> Kernel<B> {
    pub(crate) fn from_parts(raw: B::Kernel, device: u64) -> Self {
        Kernel { raw: Arc::new(raw), device }
    }

    /// The entry-point name.
    pub fn name(&self) -> &str {
        self.raw.name()
    }

    /// The backend's kernel.
    pub fn raw(&self) -> &B::Kernel {
        &self.raw
    }

    pub(crate) fn device_id(&self) -> u64 {
        self.device
    }
}
