// Package top is xcetop: the live cluster dashboard, a bubbletea model and
// its view, fed by messages (Feed turns the controller's watch stream and
// host and queue polls into them) so that tests and benchmarks drive it
// with a simulated controller. lib/top/live dials the real one.
//
// Choices made here, where the issue leaves room:
//   - Jobs come from one query at start and then from the watch stream,
//     batched every 200 ms so that a burst of changes costs one redraw. A
//     job never seen is fetched whole (the stream carries no specs). After
//     a broken stream the connection is dialled again and the jobs are
//     queried again.
//   - Every job is kept sorted once (radix sort on packed keys); a filter
//     is a linear pass over that, and a batch from the stream is merged
//     into both lists. The overview and the users pane are counted job by
//     job as changes come. A frame draws only the rows that fit, so it
//     costs the same with 100 jobs or 100,000 (see bench_test.go and
//     TestFrameBudget).
//   - Hosts and queues are not streamed: they are polled every 2 s, and
//     each poll adds one sample to a host's load history (the last 60); a
//     host's detail shows the controller's own history (the last hour)
//     when it sends one.
//   - Submissions, starts and completions per minute come from the jobs'
//     own times, so the sparklines have a history from the first frame.
//   - Reserved memory is the rusage[mem=] of running jobs (MB unless a unit
//     is given), used memory is what hosts report as taken; GPUs used are
//     the -gpu num= of running jobs.
//   - The fairshare priority on the users pane is the scheduler's dynamic
//     priority (LSF's formula, sent with each fairshare queue), the
//     user's best over the queues; for a user the controller gives none
//     yet, shares / (1 + running slots) stands in.
//   - An ordinary user sees every job the controller shows, starts on their
//     own (filter user:NAME; esc clears it), and may act only on their own
//     jobs; hosts and queues are controlled by administrators only, as the
//     controller decides. It checks again, and its refusal is shown.
//   - Every state has a glyph as well as a colour (▶ RUN, ○ PEND, ◌ PSUSP,
//     ‖ suspended, ✔ DONE, ✘ EXIT; ● ok, ◑ full (closed_Full or
//     closed_Excl: busy, not closed by anyone), ◐ closed by an
//     administrator, ✘ unavail, ? unreach), the selected row a ">";
//     NO_COLOR and --once draw no colour at all. The overview counts full
//     hosts apart from closed ones.
//   - Tables never cut a value in the middle: numeric columns (job ids,
//     slots, memory) are as wide as their widest visible value, the bars
//     and the job name give up the room; only free text (names, reasons)
//     is cut, with "~".
//   - --once prints one frame for a pipe: no cursor, no key hints, no
//     blank lines to the terminal's height, no trailing blanks.
//   - A drilled-into job's output is read from where bpeek finds it, so it
//     shows when xcetop runs where that file is visible.
package top
