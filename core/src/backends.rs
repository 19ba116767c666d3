//! The one list of kiln's backends, [`backend_list!`](crate::backend_list).

/// Invoke `$callback! { ($($args)*) ENTRIES }` with one entry per backend
/// kiln knows, each
///
/// ```text
/// /// doc line
/// Variant { name: "lower-case name", preference: 0, feature: "cargo feature", backend: crate_name::Type },
/// ```
///
/// where `preference` orders the backends for `kiln::Device::best` (lower
/// first: GPUs before the CPU), `feature` is the feature of the `kiln`
/// crate that compiles the backend in (none for the CPU backend, which is
/// always there), and `backend` is the type implementing
/// [`Backend`](crate::Backend) in its own crate.
///
/// This is the only list of backends: kiln-core generates [`BackendKind`](crate::BackendKind)
/// (its variants, [`ALL`](crate::BackendKind::ALL), names, parsing and the
/// error naming what a name may be) from it, and the `kiln` crate its
/// run-time tier (one enum arm per backend compiled in, behind its
/// feature), its registry (`Device::open`, `best`, `all`, `probe`) and the
/// devices report. The backend crates are dependencies of `kiln`, not of
/// kiln-core: an entry's `backend` is only tokens until `kiln` expands them
/// behind the entry's feature.
///
/// Adding a backend `Foo` touches:
/// 1. a crate `kiln-foo` implementing [`Backend`](crate::Backend), whose
///    `KIND` is `BackendKind::Foo`;
/// 2. an entry here, `Foo { name: "foo", preference: .., feature: "foo",
///    backend: kiln_foo::Foo }`;
/// 3. in `kiln`'s Cargo.toml, the optional dependency `kiln-foo` and the
///    feature `foo = ["dep:kiln-foo"]`;
/// 4. where it reads a language no backend reads yet, that language in
///    [`Language`](crate::Language) and its generators in kiln-kernels;
/// 5. `kiln_conformance::conformance_tests!(Foo)` in its tests.
///
/// # Examples
/// ```
/// // The backends' names, in the list's order.
/// macro_rules! names {
///     (() $($(#[doc = $doc:literal])* $variant:ident { name: $name:literal, $($rest:tt)* },)*) => {
///         [$($name),*]
///     };
/// }
/// assert_eq!(kiln_core::backend_list!(names!()), ["cpu", "cuda", "wgpu"]);
/// ```
#[macro_export]
macro_rules! backend_list {
    ($($callback:ident)::+ ! ($($args:tt)*)) => {
        $($callback)::+! { ($($args)*)
            /// The CPU reference backend (rayon).
            Cpu { name: "cpu", preference: 2, backend: kiln_cpu::Cpu },
            /// NVIDIA CUDA through cudarc.
            Cuda { name: "cuda", preference: 0, feature: "cuda", backend: kiln_cuda::Cuda },
            /// wgpu (Vulkan, Metal, DX12).
            Wgpu { name: "wgpu", preference: 1, feature: "wgpu", backend: kiln_wgpu::Wgpu },
        }
    };
}
