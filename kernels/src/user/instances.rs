//! A built user kernel's instances: what it generates for each combination
//! of argument dtypes, index width and language, made once and kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kiln_core::{DType, IndexWidth, Language, Result};

/// What an instance is generated for: argument dtypes, index width, language.
type InstanceKey = (Vec<DType>, IndexWidth, Language);

/// The instances `I` of one built kernel, each made on first use.
pub(super) struct Instances<I>(Mutex<HashMap<InstanceKey, Arc<I>>>);

impl<I> Default for Instances<I> {
    fn default() -> Self {
        Instances(Mutex::new(HashMap::new()))
    }
}

impl<I> Instances<I> {
    /// The instance for `language`, `width` and argument `dtypes`, made by
    /// `build` the first time it is asked for.
    pub(super) fn get(
        &self,
        language: Language,
        width: IndexWidth,
        dtypes: &[DType],
        build: impl FnOnce() -> Result<Arc<I>>,
    ) -> Result<Arc<I>> {
        crate::memo::cached(&self.0, (dtypes.to_vec(), width, language), build)
    }
}
