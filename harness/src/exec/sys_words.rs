//! The language's words for CUDA enum values. Each pair is written once, as the word's CUDA value ([`ToSys`]); the
//! reverse (a value CUDA returned, named in the trace) is derived by searching the word set, so a returned value the
//! language has no word for is named `unknown(N)` instead of being mislabelled.

use crate::case::ast::{
    CacheConfig, CaptureMode, CaptureStatus, LaunchAttr, Limit, MemoryType, NodeWord, SrcAccessOrder, SyncDomain,
};
use crate::case::words::Word;
use cuda_sys as sys;

/// A word with a CUDA enum value.
pub trait ToSys: Word {
    type Sys: PartialEq + Copy;
    fn to_sys(self) -> Self::Sys;
    /// The raw number of a value, for `unknown(N)`.
    fn raw(value: Self::Sys) -> i64;

    /// The word for a value CUDA returned.
    fn name_of(value: Self::Sys) -> String {
        match Self::ALL.iter().find(|w| w.to_sys() == value) {
            Some(w) => w.word().to_owned(),
            None => format!("unknown({})", Self::raw(value)),
        }
    }
}

impl ToSys for CaptureMode {
    type Sys = sys::cudaStreamCaptureMode;
    fn to_sys(self) -> Self::Sys {
        use sys::cudaStreamCaptureMode as M;
        match self {
            CaptureMode::Global => M::cudaStreamCaptureModeGlobal,
            CaptureMode::ThreadLocal => M::cudaStreamCaptureModeThreadLocal,
            CaptureMode::Relaxed => M::cudaStreamCaptureModeRelaxed,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        value.0 as i64
    }
}

impl ToSys for CaptureStatus {
    type Sys = sys::cudaStreamCaptureStatus;
    fn to_sys(self) -> Self::Sys {
        use sys::cudaStreamCaptureStatus as S;
        match self {
            CaptureStatus::None => S::cudaStreamCaptureStatusNone,
            CaptureStatus::Active => S::cudaStreamCaptureStatusActive,
            CaptureStatus::Invalidated => S::cudaStreamCaptureStatusInvalidated,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        value.0 as i64
    }
}

impl ToSys for MemoryType {
    type Sys = sys::cudaMemoryType;
    fn to_sys(self) -> Self::Sys {
        use sys::cudaMemoryType as M;
        match self {
            MemoryType::Unregistered => M::cudaMemoryTypeUnregistered,
            MemoryType::Host => M::cudaMemoryTypeHost,
            MemoryType::Device => M::cudaMemoryTypeDevice,
            MemoryType::Managed => M::cudaMemoryTypeManaged,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        value.0 as i64
    }
}

impl ToSys for Limit {
    type Sys = sys::cudaLimit;
    fn to_sys(self) -> Self::Sys {
        use sys::cudaLimit as L;
        match self {
            Limit::StackSize => L::cudaLimitStackSize,
            Limit::PrintfFifoSize => L::cudaLimitPrintfFifoSize,
            Limit::MallocHeapSize => L::cudaLimitMallocHeapSize,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        value.0 as i64
    }
}

impl ToSys for CacheConfig {
    type Sys = sys::cudaFuncCache;
    fn to_sys(self) -> Self::Sys {
        use sys::cudaFuncCache as C;
        match self {
            CacheConfig::PreferNone => C::cudaFuncCachePreferNone,
            CacheConfig::PreferShared => C::cudaFuncCachePreferShared,
            CacheConfig::PreferL1 => C::cudaFuncCachePreferL1,
            CacheConfig::PreferEqual => C::cudaFuncCachePreferEqual,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        value.0 as i64
    }
}

impl ToSys for NodeWord {
    type Sys = sys::cudaGraphNodeType;
    fn to_sys(self) -> Self::Sys {
        use sys::cudaGraphNodeType as T;
        match self {
            NodeWord::Kernel => T::cudaGraphNodeTypeKernel,
            NodeWord::Memcpy => T::cudaGraphNodeTypeMemcpy,
            NodeWord::Memset => T::cudaGraphNodeTypeMemset,
            NodeWord::Host => T::cudaGraphNodeTypeHost,
            NodeWord::Graph => T::cudaGraphNodeTypeGraph,
            NodeWord::Empty => T::cudaGraphNodeTypeEmpty,
            NodeWord::WaitEvent => T::cudaGraphNodeTypeWaitEvent,
            NodeWord::EventRecord => T::cudaGraphNodeTypeEventRecord,
            NodeWord::ExtSemaphoreSignal => T::cudaGraphNodeTypeExtSemaphoreSignal,
            NodeWord::ExtSemaphoreWait => T::cudaGraphNodeTypeExtSemaphoreWait,
            NodeWord::MemAlloc => T::cudaGraphNodeTypeMemAlloc,
            NodeWord::MemFree => T::cudaGraphNodeTypeMemFree,
            NodeWord::Conditional => sys::compat::cudaGraphNodeTypeConditional,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        value.0 as i64
    }
}

// The batched copies' source access order and the launch attributes of streams and nodes.

impl ToSys for SrcAccessOrder {
    /// `cudaMemcpySrcAccessOrder` as a number: the type exists only in 12.8+ headers (`compat` passes it on).
    type Sys = u32;
    fn to_sys(self) -> Self::Sys {
        use SrcAccessOrder as O;
        match self {
            O::Stream => sys::compat::SRC_ACCESS_ORDER_STREAM,
            O::DuringCall => sys::compat::SRC_ACCESS_ORDER_DURING_API_CALL,
            O::Any => sys::compat::SRC_ACCESS_ORDER_ANY,
            O::Invalid => sys::compat::SRC_ACCESS_ORDER_INVALID,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        i64::from(value)
    }
}

impl ToSys for LaunchAttr {
    type Sys = sys::cudaLaunchAttributeID;
    fn to_sys(self) -> Self::Sys {
        use LaunchAttr as A;
        match self {
            A::Priority => sys::cudaLaunchAttributeID::cudaLaunchAttributePriority,
            A::MemSyncDomain => sys::cudaLaunchAttributeID::cudaLaunchAttributeMemSyncDomain,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        i64::from(value.0)
    }
}

impl ToSys for SyncDomain {
    type Sys = sys::cudaLaunchMemSyncDomain;
    fn to_sys(self) -> Self::Sys {
        use SyncDomain as D;
        match self {
            D::Default => sys::cudaLaunchMemSyncDomain::cudaLaunchMemSyncDomainDefault,
            D::Remote => sys::cudaLaunchMemSyncDomain::cudaLaunchMemSyncDomainRemote,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        i64::from(value.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returned_values_are_named_in_the_language() {
        use sys::cudaStreamCaptureStatus as S;
        assert_eq!(CaptureStatus::name_of(S::cudaStreamCaptureStatusInvalidated), "invalidated");
        assert_eq!(CaptureStatus::name_of(sys::cudaStreamCaptureStatus(9)), "unknown(9)");
        for &mode in CaptureMode::ALL {
            assert_eq!(CaptureMode::name_of(mode.to_sys()), mode.word());
        }
        assert_eq!(MemoryType::name_of(sys::cudaMemoryType::cudaMemoryTypeHost), "host");
        assert_eq!(NodeWord::name_of(sys::cudaGraphNodeType::cudaGraphNodeTypeWaitEvent), "wait-event");
        assert_eq!(NodeWord::name_of(sys::cudaGraphNodeType(99)), "unknown(99)");
    }
}
