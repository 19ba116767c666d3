//! The capture side of [`Stream`]: beginning and ending a capture, and the
//! events that fork other streams into it and join them back.

use std::sync::{Arc, Weak};

use super::joins;
use super::record::{Lane, Op};
use crate::{Backend, Error, Event, Graph, RawStream, Result, Stream};

impl<B: Backend> Stream<B> {
    /// Start capturing: from now on the work enqueued on this stream
    /// (copies, fills, launches, products, so every kiln pattern) is recorded
    /// into a graph instead of being run, until [`end_capture`](Self::end_capture).
    ///
    /// During the capture:
    /// - allocation runs as usual, and the graph keeps what it allocated;
    /// - a host-to-device copy ([`copy_to_device`](Self::copy_to_device),
    ///   [`upload`](Self::upload)) copies the data into device memory the
    ///   graph keeps, and the graph copies it from there on each replay;
    /// - another stream of the device joins the capture by
    ///   [`wait`](Self::wait)ing for an event recorded here, and records into
    ///   the same graph until the capture ends; its last work must be joined
    ///   back (an event recorded on it, waited for here) before the end;
    /// - a call that needs the work to have run, or that a graph cannot
    ///   hold, is an error naming the call and enqueues nothing: blocking
    ///   reads ([`copy_to_host`](Self::copy_to_host), [`Buffer::to_vec`](crate::Buffer::to_vec),
    ///   and so the patterns that return a value, such as `reduce`: use their
    ///   `_into` forms), [`synchronize`](Self::synchronize), asynchronous
    ///   copies with host buffers, copies from another device, launching a
    ///   graph, and a wait for an event recorded outside the capture. Such a
    ///   call spoils the capture, as in CUDA: a pattern may have recorded
    ///   part of its work before the refused call, so
    ///   [`end_capture`](Self::end_capture) ends it with an error naming the
    ///   call and makes no graph.
    /// - an event recorded in the capture marks a point inside the graph: its
    ///   query, synchronize or timing is an error (the capture goes on).
    ///
    /// An error when this stream captures already (or has joined a capture).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let dev = Device::<Cpu>::open(0)?;
    /// let s = dev.stream();
    /// let mut x = s.alloc::<u32>(4)?;
    /// s.begin_capture()?;
    /// assert!(s.begin_capture().is_err());
    /// s.fill(&mut x, 7)?;
    /// let graph = s.end_capture()?;
    /// graph.launch(&s)?;
    /// assert_eq!(x.to_vec()?, [7; 4]);
    ///
    /// // A blocking read cannot be captured: it is refused, and the capture
    /// // then ends with an error naming it, and no graph.
    /// s.begin_capture()?;
    /// assert!(x.to_vec().is_err());
    /// assert!(s.end_capture().unwrap_err().to_string().contains("Stream::copy_to_host"));
    /// assert!(!s.is_capturing());
    /// # Ok(()) }
    /// ```
    pub fn begin_capture(&self) -> Result<()> {
        self.device().check_usable()?;
        if self.queue().join(Lane::begin(self.queue())) {
            Ok(())
        } else {
            Err(Error::graph(
                "Stream::begin_capture",
                "this stream is capturing already (it began a capture, or joined one by waiting for an event \
                 recorded in it): end that capture first",
            ))
        }
    }

    /// Whether this stream records its work into a graph (it began a
    /// capture, or joined one).
    pub fn is_capturing(&self) -> bool {
        self.queue().lane().is_some()
    }

    /// End the capture begun on this stream and make its graph; the work
    /// recorded so far (none of it has run) runs on each
    /// [`Graph::launch`]. The streams that joined the capture run their work
    /// again. Where host data was captured, this waits for its copy to the
    /// graph's device memory.
    ///
    /// An error, with the capture left open, when this stream is not
    /// capturing, joined the capture rather than beginning it, or when a
    /// stream that joined it has work not joined back into this one. An
    /// error, with the capture ended and no graph made, when a call was
    /// refused during it.
    pub fn end_capture(&self) -> Result<Graph<B>> {
        let lane = self.queue().lane().ok_or_else(|| {
            Error::graph("Stream::end_capture", "this stream is not capturing: call begin_capture first")
        })?;
        if lane.index != 0 {
            return Err(Error::graph(
                "Stream::end_capture",
                "this stream joined a capture begun on another stream (by waiting for an event recorded there): \
                 end the capture on that stream",
            ));
        }
        let (steps, lanes, queues, staged) = {
            let mut rec = lane.open("Stream::end_capture")?;
            if rec.refused.is_none() {
                joins::check(&rec.steps)?;
            }
            rec.ended = true;
            let queues: Vec<_> = rec.lanes.iter().filter_map(Weak::upgrade).collect();
            for queue in &queues {
                queue.leave();
            }
            if let Some(call) = &rec.refused {
                return Err(Error::graph(
                    "Stream::end_capture",
                    format!(
                        "{call} was refused during the capture, which may have left that call's work half recorded: the capture is ended without a graph; capture again without the call"
                    ),
                ));
            }
            (std::mem::take(&mut rec.steps), rec.lanes.len(), queues, rec.staged)
        };
        if staged {
            for queue in &queues {
                queue.raw.synchronize().inspect_err(|e| self.device().note_failure(e))?;
            }
        }
        Graph::new(self.device().clone(), steps, lanes)
    }

    /// The capture this stream records into, if any.
    #[inline]
    pub(crate) fn lane(&self) -> Option<Lane<B>> {
        self.queue().lane()
    }

    /// An error for `call` when this stream is capturing: a call that needs
    /// the work to have run, or that a graph cannot hold.
    /// The refusal spoils the capture (see [`begin_capture`](Self::begin_capture)).
    pub(crate) fn refuse_in_capture(&self, call: &str, reason: &str) -> Result<()> {
        match self.lane() {
            None => Ok(()),
            Some(lane) => Err(lane.refuse(call, reason)),
        }
    }

    /// [`record`](Self::record) while capturing: a mark in the recording.
    pub(crate) fn record_in_capture(&self, lane: &Lane<B>, event: &Event<B>) -> Result<()> {
        let mark = lane.mark()?;
        event.set_mark(Some(mark));
        Ok(())
    }

    /// [`wait`](Self::wait) for an event, where this stream captures or the
    /// event was recorded in a capture; `Ok(false)` when neither, and the
    /// wait is an ordinary one.
    pub(crate) fn wait_in_capture(&self, event: &Event<B>) -> Result<bool> {
        let lane = self.lane();
        let Some(mark) = event.mark() else {
            return match lane {
                None => Ok(false),
                Some(lane) => Err(lane.refuse(
                    "Stream::wait",
                    "the event was not recorded in this capture, and a graph can wait only for points inside \
                     itself: wait for the event before begin_capture",
                )),
            };
        };
        if !self.device().same(event.device()) {
            return Err(Error::graph(
                "Stream::wait",
                "the event was recorded in a graph capture on another device; a graph runs on one device",
            ));
        }
        let ended = || {
            Error::graph(
                "Stream::wait",
                format!(
                    "the event was recorded during graph capture {}, which has ended: it marks a point inside that \
                     graph; record it again outside a capture",
                    mark.capture
                ),
            )
        };
        let recording = mark.recording.upgrade().ok_or_else(ended)?;
        match lane {
            Some(lane) if Arc::ptr_eq(&lane.recording, &recording) => {
                lane.push("Stream::wait", Op::Join(mark.mark))?;
            }
            Some(lane) => {
                return Err(
                    lane.refuse("Stream::wait", "the event was recorded in another capture, and captures do not merge")
                )
            }
            None => {
                let lane = {
                    let mut rec = recording.lock().unwrap_or_else(|p| p.into_inner());
                    if rec.ended {
                        return Err(ended());
                    }
                    rec.lanes.push(Arc::downgrade(self.queue()));
                    Lane { recording: recording.clone(), index: rec.lanes.len() - 1 }
                };
                if !self.queue().join(lane.clone()) {
                    return Err(Error::graph(
                        "Stream::wait",
                        "this stream began capturing on another thread while it joined a capture",
                    ));
                }
                lane.push("Stream::wait", Op::Join(mark.mark))?;
            }
        }
        Ok(true)
    }
}
