//! WGSL programs: compiled to shader modules once per device (the device's
//! kernel cache holds them), and to compute pipelines once per block shape
//! and binding layout (cached here).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kiln_core::{Backend, BackendKind, Error, Program, RawKernel, Result};
use wgpu::naga;

use crate::context::Context;
use crate::errors::{describe, scoped};
use crate::reflect::{reflect, Reflection, BLOCK_OVERRIDES};
use crate::resources::checks_for;

/// What a pipeline depends on besides the module.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PipelineKey {
    /// `LaunchConfig::block`, set through the `block_*` overrides.
    pub(crate) block: [u32; 3],
    /// Per buffer argument, whether its binding is `read_write`.
    pub(crate) writable: Vec<bool>,
    /// Whether group 1 holds the scalar arguments.
    pub(crate) params: bool,
}

/// A compute pipeline with the layout its storage bind group is made for
/// (the scalars' is [`crate::bindings::Bindings::params`]).
pub(crate) struct Pipeline {
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) buffers: wgpu::BindGroupLayout,
    /// Whether group 1 holds the scalar arguments.
    pub(crate) params: bool,
}

/// A compiled WGSL entry point.
pub struct WgpuKernel {
    name: String,
    module: wgpu::ShaderModule,
    /// The naga module and its info, where kiln writes this kernel's SPIR-V
    /// itself, once per block shape (`spirv.rs`), and `module` is not run.
    native: Option<(naga::Module, naga::valid::ModuleInfo)>,
    pub(crate) reflection: Reflection,
    pipelines: Mutex<HashMap<PipelineKey, Arc<Pipeline>>>,
}

impl RawKernel for WgpuKernel {
    fn name(&self) -> &str {
        &self.name
    }
}

/// Environment variable that compiles kernels with wgpu's runtime checks
/// (clamped indices, bounded loops), for hunting a kernel that strays.
pub const CHECKED_ENV: &str = "KILN_WGPU_CHECKED";

/// The runtime checks compiled into kernels: by default none of those that
/// only guard against a kernel leaving its arguments (clamped indices) or
/// never ending (bounded loops), since a launch's contract already rules
/// both out (as on CUDA, where nothing is checked); all of wgpu's when
/// [`CHECKED_ENV`] is set to anything but `0`. Integer division keeps its
/// guards either way: `x / 0 == x` is WGSL's definition, which kernels use.
fn runtime_checks() -> wgpu::ShaderRuntimeChecks {
    checks_for(std::env::var(CHECKED_ENV).ok().as_deref())
}

/// `file:line:column: message` for the first location of a diagnostic,
/// followed by the compiler's full report (which quotes the source lines).
fn log(file: &str, location: Option<naga::SourceLocation>, message: &str, report: &str) -> String {
    match location {
        Some(l) => format!("{file}:{}:{}: {message}\n{report}", l.line_number, l.line_position),
        None => format!("{file}: {message}\n{report}"),
    }
}

impl WgpuKernel {
    /// Compile `program`'s WGSL. Parse and validation errors come back as
    /// `Error::Compile` whose log starts `NAME.wgsl:LINE:COLUMN: message`.
    pub(crate) fn compile(ctx: &Context, program: &Program) -> Result<Self> {
        let name = program.name().to_string();
        program.source_for::<crate::Wgpu>()?;
        let Some(source) = program.expanded(<crate::Wgpu as Backend>::LANGUAGE) else {
            return Err(Error::unsupported(
                BackendKind::Wgpu,
                format!("kernel `{name}`"),
                "its WGSL source is a host fn, not text",
            ));
        };
        let fail = |log: String| Error::Compile {
            backend: BackendKind::Wgpu,
            kernel: name.clone(),
            options: program.options().to_args(),
            log,
        };
        let file = format!("{name}.wgsl");
        // naga first: its diagnostics carry line numbers, and its module
        // tells what the entry point binds (checked against each launch).
        let module = naga::front::wgsl::parse_str(&source).map_err(|e| {
            fail(log(&file, e.location(&source), e.message(), &e.emit_to_string_with_path(&source, &file)))
        })?;
        let mut validator =
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
        let info = validator.validate(&module).map_err(|e| {
            let message = e.as_inner().to_string();
            fail(log(&file, e.location(&source), &message, &e.emit_to_string_with_path(&source, &file)))
        })?;
        let reflection = reflect(&module, &info, &name).map_err(|reason| fail(format!("{file}: {reason}")))?;
        // wgpu validates again against what this device enables (f64, f16, subgroups).
        let desc = wgpu::ShaderModuleDescriptor {
            label: Some(&name),
            source: wgpu::ShaderSource::Wgsl(source.as_str().into()),
        };
        let checks = runtime_checks();
        // SAFETY: without runtime checks the module may index out of bounds
        // or loop forever if the kernel does; it runs only through
        // `RawStream::launch`, whose caller promises that it stays inside its
        // arguments' ranges.
        let (shader, error) = scoped(&ctx.device, || unsafe { ctx.device.create_shader_module_trusted(desc, checks) });
        if let Some(e) = error {
            return Err(fail(describe(&e)));
        }
        let native = ctx.spirv.is_some() && crate::spirv::has_mul_wide(&module);
        let native = native.then_some((module, info));
        Ok(WgpuKernel { name, module: shader, native, reflection, pipelines: Mutex::new(HashMap::new()) })
    }

    /// This kernel's SPIR-V with the overrides `constants` set, as a module
    /// of its own (`spirv.rs`), where kiln writes it; `None` where the WGSL
    /// module runs.
    fn native_module(
        &self,
        ctx: &Context,
        constants: &[(&str, f64)],
        block: [u32; 3],
    ) -> std::result::Result<Option<wgpu::ShaderModule>, String> {
        let (Some((module, info)), Some(target)) = (&self.native, ctx.spirv) else {
            return Ok(None);
        };
        let constants = constants.iter().map(|&(k, v)| (k.to_string(), v)).collect();
        let words = crate::spirv::compile(module, info, &self.name, &constants, target, runtime_checks())
            .map_err(|e| format!("kiln's SPIR-V of it failed, {e}"))?;
        let entry = wgpu::PassthroughShaderEntryPoint {
            name: self.name.as_str().into(),
            workgroup_size: (block[0], block[1], block[2]),
        };
        let desc = wgpu::ShaderModuleDescriptorPassthrough {
            label: Some(&self.name),
            entry_points: vec![entry].into(),
            spirv: Some(words.into()),
            ..Default::default()
        };
        // SAFETY: the words are naga's SPIR-V of a module that naga
        // validated and wgpu accepted as WGSL for this device (`compile`),
        // written as wgpu writes it, with its bindings where the WGSL puts
        // them (the layouts `pipeline` makes from its reflection), and with
        // calls of `kiln_mul_wide` replaced by `OpUMulExtended`, which
        // gives the same two words (`spirv.rs`). It runs only through
        // `RawStream::launch`, as the WGSL module would.
        Ok(Some(unsafe { ctx.device.create_shader_module_passthrough(desc) }))
    }

    /// The pipeline for `key`, created on first use.
    pub(crate) fn pipeline(&self, ctx: &Context, key: &PipelineKey) -> Result<Arc<Pipeline>> {
        let mut cache = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = cache.get(key) {
            return Ok(p.clone());
        }
        let invalid = |reason: String| Error::InvalidLaunch { kernel: self.name.clone(), reason };
        let limits = &ctx.limits;
        if key.writable.len() as u64 > u64::from(limits.max_storage_buffers_per_shader_stage) {
            return Err(invalid(format!(
                "{} buffer arguments; this adapter binds at most {} storage buffers per kernel (max_storage_buffers_per_shader_stage)",
                key.writable.len(),
                limits.max_storage_buffers_per_shader_stage
            )));
        }
        let device = &ctx.device;
        let label = Some(self.name.as_str());
        let build = || {
            let buffers = ctx.bindings.storage(device, &key.writable);
            let params = key.params.then_some(&ctx.bindings.params);
            let groups: Vec<Option<&wgpu::BindGroupLayout>> =
                [Some(&buffers), params].into_iter().flatten().map(Some).collect();
            let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label,
                bind_group_layouts: &groups,
                immediate_size: 0,
            });
            let mut constants: Vec<(&str, f64)> = (0..3)
                .filter(|&axis| self.reflection.overrides[axis])
                .map(|axis| (BLOCK_OVERRIDES[axis], f64::from(key.block[axis])))
                .collect();
            let native = self.native_module(ctx, &constants, key.block)?;
            if native.is_some() {
                // Set in the SPIR-V already.
                constants.clear();
            }
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label,
                layout: Some(&layout),
                module: native.as_ref().unwrap_or(&self.module),
                entry_point: Some(&self.name),
                // Like CUDA's shared memory, workgroup memory starts undefined:
                // zeroing it costs every launch of a kernel that uses it.
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            });
            Ok(Pipeline { pipeline, buffers, params: key.params })
        };
        match scoped(device, build) {
            (Err(reason), _) => Err(invalid(reason)),
            (Ok(p), None) => {
                let p = Arc::new(p);
                cache.insert(key.clone(), p.clone());
                Ok(p)
            }
            (Ok(_), Some(e)) => {
                Err(invalid(format!("creating its pipeline for block {:?} failed: {}", key.block, describe(&e))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::resources::checks_for;

    #[test]
    fn checks_only_when_asked_for() {
        for off in [None, Some(""), Some("0"), Some(" 0 ")] {
            let c = checks_for(off);
            assert!(!c.bounds_checks && !c.force_loop_bounding, "{off:?}");
            assert!(c.int_div_checks, "WGSL's integer division semantics stay: {off:?}");
        }
        for on in [Some("1"), Some("yes")] {
            let c = checks_for(on);
            assert!(c.bounds_checks && c.force_loop_bounding && c.int_div_checks, "{on:?}");
        }
    }
}
