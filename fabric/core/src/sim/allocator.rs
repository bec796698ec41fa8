//! The allocator interface of the event core. An allocator sets every active flow's
//! rate and the next event time, keeping whatever state it needs to do that fast; the
//! core (`Core`) owns the trace, the flows' status, admission, the event heaps and time,
//! and calls its run's allocator once per event (`Allocator::allocate`) plus a few
//! notifications (a flow became active, its data became complete, it was terminated).
//!
//! The four allocators, each in its own module with its own state:
//! - `FullRecomputation` (full.rs): every rate from scratch, for every scheduler; the
//!   reference the others are tested against;
//! - `IncrementalPriority` (incr.rs): strict-priority schedulers, re-evaluating only
//!   the flows an event can affect;
//! - `IncrementalFairSharing` (fair.rs): max-min fair sharing (`ps`, `wps`, the shadow
//!   run of `fair` and `gtcp:*`), re-filling only where an event changes the rates;
//! - `LasRecords` (las.rs): LAS's full recomputation on packed per-flow records (two
//!   widths: paths of up to 4 links, and of up to 10).
//!
//! `Allocators` holds the one a run uses and implements the trait by one `match` per
//! call (static dispatch: the allocators' own loops are compiled for their type); the
//! `allocators!` macro writes the enum and those matches from one list of variants.
use super::fair::IncrementalFairSharing;
use super::full::FullRecomputation;
use super::incr::IncrementalPriority;
use super::las::{LasRecords, MAX_PATH, WIDE_PATH};
use super::Core;
use crate::error::Result;

/// One allocation strategy of the event core. The core calls these at its events, in
/// this order within one event: `advance` (time moves to the event and finished flows
/// complete), `data_complete` and `terminate` for the flows they concern, `activate`
/// for each arriving or admitted flow, `remove_finished` if any flow left; then, before
/// the next event time is needed, `allocate`.
pub(crate) trait Allocator {
    /// The allocator's name in messages (the progress guard's).
    fn name(&self) -> &'static str;

    /// Whether flows advance lazily under this allocator (`Core::lazy`): it keeps each
    /// flow's own next event, and brings a flow's `sent` up to date only when its rate
    /// changes. Fixed for a run.
    fn advances_lazily(&self) -> bool;

    /// Flow i becomes active (the core has set its status): the allocator adds it to
    /// `core.active` and to its own state. Its rate is set at the next `allocate`.
    fn activate(&mut self, core: &mut Core, i: usize);

    /// Moves time to the event time `t` (not before `core.now`) and finishes the flows
    /// whose bytes are all sent and whose data has arrived by then (status `Done`,
    /// finish time, destination slot released). Returns whether a finished flow is
    /// still in `core.active`, for `remove_finished`.
    fn advance(&mut self, core: &mut Core, t: f64) -> bool;

    /// Moves time to `until`, before the next event (no flow finishes on the way).
    fn advance_idle(&mut self, core: &mut Core, until: f64);

    /// All of active flow i's data has become available at `t` (it may finish now, or
    /// its cap and key change).
    fn data_complete(&mut self, _core: &mut Core, _i: usize, _t: f64) {}

    /// Active flow i is terminated (its deadline passed); the core then sets its status.
    fn terminate(&mut self, _core: &mut Core, _i: usize) {}

    /// Flows finished or were terminated in this event: drop those still in
    /// `core.active` (whose status is no longer `Active`).
    fn remove_finished(&mut self, core: &mut Core);

    /// The PIAS thresholds (`core.cfg.pias_thresholds_bytes`) were replaced between two
    /// events: an active flow's queue may have changed either way. An allocator that
    /// recomputes every rate at `allocate` needs nothing more.
    fn thresholds_changed(&mut self, _core: &mut Core) {}

    /// Sets every active flow's rate (`core.rate`, with `core.cap` where data caps it)
    /// and the next event time (`core.next_event`): the earliest of the timed events
    /// (`Core::next_timed_event`) and those the rates bring (completions, catching up
    /// with data, thresholds, priority crossings). Fails only through the progress
    /// guard (`SimError::Stalled`).
    fn allocate(&mut self, core: &mut Core) -> Result<()>;
}

/// Defines `Allocators` from its one list of variants, and its `Allocator` impl: every
/// method forwards to the variant's allocator by one `match` with an arm per variant
/// (static dispatch). A new allocator is one line in the list below.
macro_rules! allocators {
    (
        $(#[$attr:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vattr:meta])* $variant:ident($ty:ty), )+
        }
    ) => {
        $(#[$attr])*
        $vis enum $name {
            $( $(#[$vattr])* $variant($ty), )+
        }

        /// Forwards a call to the allocator the run uses: `dispatch!(self, a => a.f(x))`
        /// is `match self { Self::V(a) => a.f(x), ... }` over every variant.
        macro_rules! dispatch {
            ($self_:expr, $a:ident => $e:expr) => {
                match $self_ {
                    $( $name::$variant($a) => $e, )+
                }
            };
        }

        impl Allocator for $name {
            #[inline]
            fn name(&self) -> &'static str {
                dispatch!(self, a => a.name())
            }
            #[inline]
            fn advances_lazily(&self) -> bool {
                dispatch!(self, a => a.advances_lazily())
            }
            #[inline]
            fn activate(&mut self, core: &mut Core, i: usize) {
                dispatch!(self, a => a.activate(core, i))
            }
            #[inline]
            fn advance(&mut self, core: &mut Core, t: f64) -> bool {
                dispatch!(self, a => a.advance(core, t))
            }
            #[inline]
            fn advance_idle(&mut self, core: &mut Core, until: f64) {
                dispatch!(self, a => a.advance_idle(core, until))
            }
            #[inline]
            fn data_complete(&mut self, core: &mut Core, i: usize, t: f64) {
                dispatch!(self, a => a.data_complete(core, i, t))
            }
            #[inline]
            fn terminate(&mut self, core: &mut Core, i: usize) {
                dispatch!(self, a => a.terminate(core, i))
            }
            #[inline]
            fn remove_finished(&mut self, core: &mut Core) {
                dispatch!(self, a => a.remove_finished(core))
            }
            #[inline]
            fn thresholds_changed(&mut self, core: &mut Core) {
                dispatch!(self, a => a.thresholds_changed(core))
            }
            #[inline]
            fn allocate(&mut self, core: &mut Core) -> Result<()> {
                dispatch!(self, a => a.allocate(core))
            }
        }
    };
}

allocators! {
    /// The allocator of a run, picked in `Simulator::new` from `SimConfig::allocator` and
    /// the scheduler.
    #[derive(Debug, Clone)]
    pub(crate) enum Allocators {
        /// Strict-priority schedulers, incrementally (incr.rs).
        Priority(IncrementalPriority),
        /// Max-min fair sharing, incrementally (fair.rs).
        FairSharing(IncrementalFairSharing),
        /// LAS on packed records (las.rs), paths of up to 4 links.
        Las(LasRecords<MAX_PATH>),
        /// LAS on wider packed records, paths of up to 10 links (small fat-trees and parking lots).
        LasWide(LasRecords<WIDE_PATH>),
        /// The full recomputation, for every scheduler (full.rs).
        Full(FullRecomputation),
    }
}

impl Allocator for FullRecomputation {
    #[inline]
    fn name(&self) -> &'static str {
        "full recomputation"
    }
    #[inline]
    fn advances_lazily(&self) -> bool {
        false
    }
    #[inline]
    fn activate(&mut self, core: &mut Core, i: usize) {
        core.active.push(i as u32);
    }
    #[inline]
    fn advance(&mut self, core: &mut Core, t: f64) -> bool {
        core.advance_fluid(t);
        core.finish_due(core.now)
    }
    #[inline]
    fn advance_idle(&mut self, core: &mut Core, until: f64) {
        core.advance_fluid(until);
    }
    #[inline]
    fn remove_finished(&mut self, core: &mut Core) {
        core.retain_active();
    }
    #[inline]
    fn allocate(&mut self, core: &mut Core) -> Result<()> {
        self.recompute(core);
        Ok(())
    }
}

impl<const N: usize> Allocator for LasRecords<N> {
    #[inline]
    fn name(&self) -> &'static str {
        if N <= MAX_PATH {
            "LAS fast path of the full recomputation"
        } else {
            "LAS fast path of the full recomputation, wide records"
        }
    }
    #[inline]
    fn advances_lazily(&self) -> bool {
        false
    }
    #[inline]
    fn activate(&mut self, core: &mut Core, i: usize) {
        core.active.push(i as u32);
    }
    #[inline]
    fn advance(&mut self, core: &mut Core, t: f64) -> bool {
        self.las_advance_complete(core, t)
    }
    #[inline]
    fn advance_idle(&mut self, core: &mut Core, until: f64) {
        self.las_advance_fluid(core, until);
    }
    #[inline]
    fn remove_finished(&mut self, core: &mut Core) {
        self.removed = true;
        core.retain_active();
    }
    #[inline]
    fn allocate(&mut self, core: &mut Core) -> Result<()> {
        self.allocate_las(core);
        Ok(())
    }
}

impl Allocator for IncrementalPriority {
    #[inline]
    fn name(&self) -> &'static str {
        "incremental priority allocator"
    }
    #[inline]
    fn advances_lazily(&self) -> bool {
        true
    }
    #[inline]
    fn activate(&mut self, core: &mut Core, i: usize) {
        self.incr_activate(core, i);
    }
    #[inline]
    fn advance(&mut self, core: &mut Core, t: f64) -> bool {
        core.now = t.max(core.now);
        self.incr_flow_events(core, core.now);
        false
    }
    #[inline]
    fn advance_idle(&mut self, core: &mut Core, until: f64) {
        core.now = until; // flows advance lazily
    }
    #[inline]
    fn data_complete(&mut self, core: &mut Core, i: usize, t: f64) {
        if !self.incr_try_finish(core, i, t) {
            self.incr_changed(core, i, true);
        }
    }
    #[inline]
    fn terminate(&mut self, core: &mut Core, i: usize) {
        self.incr_remove(core, i);
    }
    #[inline]
    fn remove_finished(&mut self, _core: &mut Core) {
        // Flows leave `active` as they finish or are terminated.
    }
    fn thresholds_changed(&mut self, core: &mut Core) {
        self.incr_thresholds_changed(core);
    }
    #[inline]
    fn allocate(&mut self, core: &mut Core) -> Result<()> {
        self.incr_allocate(core)
    }
}

impl Allocator for IncrementalFairSharing {
    #[inline]
    fn name(&self) -> &'static str {
        if self.direct {
            "fair-sharing allocator, direct fill"
        } else {
            "incremental fair-sharing allocator"
        }
    }
    #[inline]
    fn advances_lazily(&self) -> bool {
        true
    }
    #[inline]
    fn activate(&mut self, core: &mut Core, i: usize) {
        self.fair_activate(core, i);
    }
    #[inline]
    fn advance(&mut self, core: &mut Core, t: f64) -> bool {
        core.now = t.max(core.now);
        self.flow_events_due(core, core.now);
        false
    }
    #[inline]
    fn advance_idle(&mut self, core: &mut Core, until: f64) {
        core.now = until; // flows advance lazily
    }
    #[inline]
    fn data_complete(&mut self, core: &mut Core, i: usize, t: f64) {
        if !self.try_finish(core, i, t) {
            self.fair_changed(i);
        }
    }
    #[inline]
    fn terminate(&mut self, core: &mut Core, i: usize) {
        self.fair_remove(core, i);
    }
    #[inline]
    fn remove_finished(&mut self, _core: &mut Core) {
        // Flows leave `active` as they finish or are terminated.
    }
    #[inline]
    fn allocate(&mut self, core: &mut Core) -> Result<()> {
        self.fair_allocate(core)
    }
}
