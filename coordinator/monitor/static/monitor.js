/* hybridsim monitor: the plots of one run, live (server-sent events from `hybridsim monitor`)
 * or from data embedded in the page (`hybridsim report`).  Plots with the vendored uPlot.
 *
 * The page feeds this script JSON of the shapes `coordinator.monitor.jsonview` writes:
 *   info  {experiment, dt_s, total_steps, response_dofs, modules: [{name, dofs, has_command, ...}], ...}
 *   frame {step, time, wall, ground, response: [per DOF], command|measured|force: [per module DOF],
 *          indicators: [per column of info.indicators], progress}
 * SI units (m, rad, N, N*m, s); step times are shown in ms.
 */
"use strict";

const hybridsimMonitor = (() => {
  const COLORS = ["#1f6fb4", "#d62728", "#2a9d3c", "#e8850c", "#8a4fbf", "#8c564b", "#d14fa8", "#139aa8"];
  const SHOWN_PER_MODULE = 2;
  const $ = (id) => document.getElementById(id);

  let info = null;
  let cols = null;
  let progress = null;
  let charts = [];
  let dirty = false;
  let redraws = 0;

  // ---------------------------------------------------------------- data
  function reset(runInfo) {
    info = runInfo;
    let offset = 0;
    for (const m of info.modules) { m.offset = offset; offset += m.dofs.length; }
    const width = offset;
    offset = 0;
    for (const ind of info.indicators || []) { ind.offset = offset; offset += ind.columns.length; }
    const columns = (n) => Array.from({ length: n }, () => []);
    cols = { step: [], time: [], wall: [], response: columns(info.response_dofs.length),
             command: columns(width), measured: columns(width), force: columns(width), indicators: columns(offset) };
    progress = null;
    $("experiment").textContent = info.experiment;
    $("run-facts").textContent = `${info.integrator}, dt = ${fmt(info.dt_s * 1e3, 4)} ms, ` +
      `${info.total_steps.toLocaleString()} steps, every ${info.decimation} plotted`;
    buildCharts();
    dirty = true;
  }

  function addFrame(frame) {
    if (!info) return;
    const push = (target, values) => { for (const v of values) target.push(v); };
    push(cols.step, frame.step);
    push(cols.time, frame.time);
    push(cols.wall, frame.wall.map((s) => s * 1e3));
    frame.response.forEach((c, i) => push(cols.response[i], c));
    for (const key of ["command", "measured", "force"]) frame[key].forEach((c, i) => push(cols[key][i], c));
    (frame.indicators || []).forEach((c, i) => push(cols.indicators[i], c));
    if (frame.progress) progress = frame.progress;
    dirty = true;
  }

  // the DOFs of a module that the plots show: those among the response DOFs, else its first ones
  function shown(module) {
    const chosen = module.dofs.map((d, i) => i).filter((i) => info.response_dofs.includes(module.dofs[i]));
    return (chosen.length ? chosen : module.dofs.map((d, i) => i)).slice(0, Math.max(SHOWN_PER_MODULE, chosen.length));
  }

  // ---------------------------------------------------------------- charts
  function card(title, note) {
    const el = document.createElement("section");
    el.className = "card";
    const h = document.createElement("h2");
    h.textContent = title;
    el.appendChild(h);
    if (note) {
      const p = document.createElement("p");
      p.className = "note";
      p.textContent = note;
      el.appendChild(p);
    }
    $("plots").appendChild(el);
    return el;
  }

  function chartWidth() {
    const grid = $("plots");
    const columns = grid.clientWidth > 1100 ? 2 : 1;
    return Math.max(320, Math.floor(grid.clientWidth / columns) - 40);
  }

  // y range: uPlot's, except for flat data (all zero: a small symmetric range, not 0..100)
  function yRange(u, min, max) {
    if (min == null || max == null) return [-1e-3, 1e-3];
    if (max > min) return uPlot.rangeNum(min, max, 0.1, true);
    const half = Math.abs(min) > 0 ? 0.1 * Math.abs(min) : 1e-3;
    return [min - half, min + half];
  }

  // axis labels to the tick spacing's digits (uPlot's default keeps 3 decimals: 1e-4 m ticks all read "0")
  function ticks(u, splits, axis, space, incr) {
    const digits = Math.max(0, Math.min(15, 1 - Math.floor(Math.log10(incr))));
    return splits.map((v) => (v == null ? "" : String(Number(v.toFixed(digits)))));
  }

  // ``marks``: the times (s) of the vertical lines drawn across the chart (an indicator's crossing)
  function timeChart(title, note, yLabel, series, values, marks) {
    const el = card(title, note);
    const opts = {
      hooks: marks ? { draw: [(u) => markTimes(u, marks())] } : {},
      width: chartWidth(), height: 230,
      scales: { x: { time: false }, y: { range: yRange } },
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      series: [{ label: "t (s)", value: (u, v) => (v == null ? "-" : v.toFixed(3)) }].concat(series),
      axes: [{ label: "t (s)" }, { label: yLabel, size: 70, values: ticks }],
    };
    const data = () => [cols.time].concat(values());
    charts.push({ plot: new uPlot(opts, data(), el), data, name: title, marks });
  }

  function markTimes(u, times) {
    const ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = "#b3261e";
    ctx.lineWidth = 1.5 * devicePixelRatio;
    ctx.setLineDash([2 * devicePixelRatio, 3 * devicePixelRatio]);
    for (const t of times) {
      const x = Math.round(u.valToPos(t, "x", true));
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
    }
    ctx.restore();
  }

  function line(label, color, dashed) {
    return { label, stroke: color, width: 1.5, dash: dashed ? [6, 4] : undefined, points: { show: false },
             value: (u, v) => (v == null ? "-" : v.toPrecision(4)) };
  }

  function buildCharts() {
    for (const c of charts) c.plot.destroy();
    charts = [];
    $("plots").replaceChildren();

    timeChart(`Response: displacement of ${info.response_dofs.join(", ")}`, "the DOFs the ground shakes", "m, rad",
      info.response_dofs.map((d, i) => line(d, COLORS[i % COLORS.length])), () => cols.response);

    for (const ind of info.indicators || []) indicatorChart(ind);

    for (const m of info.modules) {
      const idx = shown(m);
      const series = [], columns = [];
      idx.forEach((i, k) => {
        const color = COLORS[k % COLORS.length];
        if (m.has_command) { series.push(line(`${m.dofs[i]} target`, color, true)); columns.push(m.offset + i); }
        series.push(line(`${m.dofs[i]} measured`, color)); columns.push(-(m.offset + i) - 1);
      });
      const what = m.has_command ? "target (dashed) and measured displacement" : "measured displacement";
      timeChart(`${m.name}: ${what} of ${idx.map((i) => m.dofs[i]).join(", ")}`,
        `${moduleNote(m)}; ${idx.length} of ${m.dofs.length} DOFs` + (m.has_command ? "" : "; no target (DOF names unknown)"),
        "m, rad", series, () => columns.map((c) => (c >= 0 ? cols.command[c] : cols.measured[-c - 1])));
    }

    const tracked = actuatedPairs();
    if (tracked.length) {
      timeChart("Tracking error: measured - target displacement (mm, mrad)", "sites with actuators; zero when the " +
        "actuators reach their command", "mm, mrad", tracked.map(([m, i], k) => line(`${m.name} ${m.dofs[i]}`, COLORS[k % COLORS.length])),
        () => tracked.map(([m, i]) => {
          const target = cols.command[m.offset + i], measured = cols.measured[m.offset + i];
          return measured.map((v, r) => (v == null || target[r] == null ? null : 1e3 * (v - target[r])));
        }));
    }

    syncChart(tracked.concat(watchedPairs().filter(([m, i]) => !tracked.some(([n, j]) => n === m && j === i))));

    for (const m of info.modules) for (const i of shown(m)) hysteresisChart(m, i);

    const forceSeries = [], forceColumns = [];
    info.modules.forEach((m) => shown(m).forEach((i) => {
      forceSeries.push(line(`${m.name} ${m.dofs[i]}`, COLORS[forceSeries.length % COLORS.length]));
      forceColumns.push(m.offset + i);
    }));
    timeChart("Interface forces: restoring force each module measured", forceSeries.map((s) => s.label).join(", "),
      "N, N*m", forceSeries,
      () => forceColumns.map((c) => cols.force[c]));

    timeChart("Step wall time (ms) against dt", info.realtime
      ? "sampled steps; the dashed line is dt (a step above it is late for real time)"
      : "sampled steps; the dashed line is dt (the run was not paced to the wall clock: information only)", "ms",
      [line("wall time", COLORS[0]), line("dt", "#888", true)],
      () => [cols.wall, cols.time.map(() => info.dt_s * 1e3)]);

    histogramChart();
  }

  function moduleNote(m) {
    return `${m.kind ? m.kind + ", " : ""}${m.where}`;
  }

  // (module, DOF index) of every shown DOF of a site with actuators whose target is known
  function actuatedPairs() {
    const pairs = [];
    for (const m of info.modules) if (m.actuated && m.has_command) for (const i of shown(m)) pairs.push([m, i]);
    return pairs;
  }

  // (module, DOF index) of every DOF of a module the integrity monitor watches, whose target is known
  function watchedPairs() {
    const watched = new Set((info.indicators || []).map((ind) => ind.module));
    const pairs = [];
    for (const m of info.modules) if (watched.has(m.name) && m.has_command) m.dofs.forEach((d, i) => pairs.push([m, i]));
    return pairs;
  }

  const INDICATOR_NAMES = { balance: "energy balance", energy_error: "energy error E_err / E_in",
                            tracking: "tracking indicator TI", delay: "online delay estimate" };
  const INDICATOR_NOTES = {
    balance: "the whole structure's energies by the trapezoidal rule (Uang & Bertero 1990); the residual, input " +
             "less the others, is what the integrator and the transfer system added",
    energy_error: "the work of the measured force on measured - commanded displacement over the input energy " +
                  "(Mosqueda et al. 2007)",
    tracking: "the area of the synchronization subspace plot, per DOF; positive for a lag (Mercan & Ricles 2007)",
    delay: "per DOF, by recursive least squares; 0 until its memory of 1000 steps has passed",
  };

  // one integrity indicator over time, with its threshold (a value: above it; the largest |value| over the
  // columns: above +threshold or below -threshold)
  function indicatorChart(ind) {
    const what = INDICATOR_NAMES[ind.indicator] || ind.indicator;
    const series = ind.columns.map((c, k) => line(c || what, COLORS[k % COLORS.length]));
    const columns = ind.columns.map((c, k) => ind.offset + k);
    const levels = ind.threshold == null ? [] : ind.columns.length === 1 && ind.columns[0] === "" ? [ind.threshold]
      : [ind.threshold, -ind.threshold];
    levels.forEach((level) => series.push(line(`threshold ${fmt(level, 4)} (${ind.action})`, "#b3261e", true)));
    const note = (INDICATOR_NOTES[ind.indicator] || "") + (ind.threshold == null ? "" :
      `; threshold ${fmt(ind.threshold, 4)}${ind.unit === "1" ? "" : " " + ind.unit}, action: ${ind.action}`);
    timeChart(`${ind.module || "Whole structure"}: ${what}`, note, ind.unit, series,
      () => columns.map((c) => cols.indicators[c]).concat(levels.map((level) => cols.time.map(() => level))),
      () => ((progress && progress.crossings) || []).filter((c) => !ind.module || c.module === ind.module)
        .map((c) => c.time_s));
  }

  // an x-y chart (uPlot mode 2): each series its own [x, y] columns; ``diagonal`` adds the line y = x
  function xyChart(el, name, xLabel, yLabel, labels, columns, diagonal) {
    const facets = [{ scale: "x", auto: true }, { scale: "y", auto: true }];
    const series = [{}].concat(labels.map((label, k) => ({
      label, stroke: COLORS[k % COLORS.length], fill: COLORS[k % COLORS.length], facets,
      paths: uPlot.paths.points(), points: { show: false, size: 3, width: 0 },
    })));
    if (diagonal) series.push({ label: "measured = target", stroke: "#999", dash: [4, 4], width: 1, facets,
                                paths: uPlot.paths.linear(), points: { show: false } });
    const opts = {
      mode: 2, width: Math.min(chartWidth(), 520), height: 320,
      scales: { x: { time: false }, y: {} },
      legend: { live: false },
      series,
      axes: [{ label: xLabel, values: ticks }, { label: yLabel, size: 70, values: ticks }],
    };
    const data = () => {
      const out = [null];
      let lo = Infinity, hi = -Infinity;
      for (const [x, y] of columns()) {
        for (const v of x) { if (v != null && v < lo) lo = v; if (v != null && v > hi) hi = v; }
        out.push([x, y]);
      }
      if (diagonal) {
        if (!(hi > lo)) { lo = -1e-3; hi = 1e-3; }
        out.push([[lo, hi], [lo, hi]]);
      }
      return out;
    };
    charts.push({ plot: new uPlot(opts, data(), el), data, name, xy: true });
  }

  function syncChart(pairs) {
    const el = card("Synchronization subspace", pairs.length
      ? "measured vs target displacement of each site with actuators and each DOF the integrity monitor " +
        "watches; on the diagonal when it reaches its command"
      : "no site with actuators (an experimental site or a lab protocol's client) whose target is known");
    if (!pairs.length) return;
    xyChart(el, "sync", "target (m, rad)", "measured (m, rad)", pairs.map(([m, i]) => `${m.name} ${m.dofs[i]}`),
      () => pairs.map(([m, i]) => [cols.command[m.offset + i], cols.measured[m.offset + i]]), true);
  }

  function hysteresisChart(m, i) {
    const el = card(`${m.name}: hysteresis of ${m.dofs[i]}`, `restoring force against measured displacement; ` +
      `${moduleNote(m)}`);
    xyChart(el, `hysteresis ${m.name} ${m.dofs[i]}`, "displacement (m, rad)", "force (N, N*m)", [`${m.name} ${m.dofs[i]}`],
      () => [[cols.measured[m.offset + i], cols.force[m.offset + i]]], false);
  }

  function histogramChart() {
    const edges = info.step_time_edges_s;
    const el = card("Step-time histogram", "every step so far, wall time per step (log scale)");
    const centers = edges.slice(1).map((e, i) => Math.log10(Math.sqrt(e * edges[i]) * 1e3));
    const opts = {
      width: chartWidth(), height: 230,
      scales: { x: { time: false } },
      legend: { live: true },
      series: [{ label: "step time", value: (u, v) => (v == null ? "-" : `${fmt(10 ** v, 3)} ms`) },
               { label: "steps", fill: "rgba(31,111,180,0.35)", stroke: COLORS[0], width: 1,
                 paths: uPlot.paths.bars({ size: [0.95, 100] }), points: { show: false } }],
      axes: [{ label: "step wall time (ms)", values: (u, vals) => vals.map((v) => fmt(10 ** v, 2)) },
             { label: "steps", size: 70 }],
    };
    const data = () => {
      const counts = progress ? progress.step_time_counts : edges.slice(1).map(() => 0);
      let first = counts.findIndex((c) => c > 0), last = counts.length - 1;
      while (last > 0 && counts[last] === 0) last--;
      if (first < 0) { first = 0; last = counts.length - 1; }
      first = Math.max(0, first - 2); last = Math.min(counts.length - 1, last + 2);
      return [centers.slice(first, last + 1), counts.slice(first, last + 1)];
    };
    charts.push({ plot: new uPlot(opts, data(), el), data, name: "histogram" });
  }

  // ---------------------------------------------------------------- status
  function fmt(v, digits) {
    return Number.isFinite(v) ? Number(v.toPrecision(digits)).toString() : "-";
  }

  function duration(s) {
    if (!(s >= 0)) return "-";
    if (s < 10) return `${s.toFixed(1)} s`;
    const m = Math.floor(s / 60), r = Math.round(s % 60);
    return m ? `${m} min ${r} s` : `${r} s`;
  }

  function renderStatus() {
    if (!progress) return;
    const p = progress;
    const state = p.state || "starting";
    const badge = $("state");
    badge.textContent = state.split(":")[0].toUpperCase();
    badge.title = state;
    badge.className = "badge " + state.split(":")[0];
    $("reason").textContent = state.includes(":") ? state.slice(state.indexOf(":") + 1).trim() : "";
    $("step").textContent = p.step;
    $("total").textContent = p.total_steps;
    $("sim-time").textContent = p.time_s.toFixed(3);
    $("progress").value = p.total_steps ? p.step / p.total_steps : 0;
    $("eta").textContent = state === "running" ? duration(p.eta_s) : state === "held" ? "held" : "-";
    $("elapsed").textContent = duration(p.elapsed_s);
    $("late").textContent = p.late_steps;
    $("late").className = p.late_steps && info.realtime ? "alert" : "";
    $("late-note").textContent = info.realtime ? "" : " (not paced: information)";
    $("max-wall").textContent = fmt(p.max_wall_step_s * 1e3, 3);
    $("mean-wall").textContent = fmt(p.mean_wall_step_s * 1e3, 3);
    $("dropped").textContent = p.dropped_frames || 0;
    renderCounters(p);
    renderMargins(p);
    renderCrossings(p);
    renderIndicatorsNow();
    if (typeof onState === "function") onState(state);
  }

  // a site on its own clock: "site lab: 2 slowed steps, 15 held samples, 40 late samples"
  const COUNTER_NAMES = [["clock_slowed_steps", "slowed steps"], ["clock_held_samples", "held samples"],
                         ["clock_late_samples", "late samples"]];

  function renderCounters(p) {
    const box = $("counters");
    const sites = Object.entries(p.counters || {});
    box.hidden = sites.length === 0;
    box.textContent = sites.map(([site, values]) => `site ${site}: ` + COUNTER_NAMES
      .filter(([key]) => key in values).map(([key, label]) => `${values[key]} ${label}`).join(", ")).join("; ");
    box.className = sites.some(([, v]) => v.clock_held_samples > 0) ? "alert" : "";
  }

  function renderMargins(p) {
    const rows = [];
    for (const m of info.modules) {
      m.dofs.forEach((d, i) => {
        const dm = p.displacement_margin[m.offset + i], fm = p.force_margin[m.offset + i];
        if (dm != null || fm != null) rows.push([m.name, d, dm, fm]);
      });
    }
    const box = $("margins");
    box.hidden = rows.length === 0;
    if (!rows.length) return;
    const cell = (v) => {
      const td = document.createElement("td");
      td.textContent = v == null ? "no limit" : `${(100 * v).toFixed(1)} %`;
      td.className = v == null ? "" : v < 0.05 ? "danger" : v < 0.2 ? "warn" : "ok";
      return td;
    };
    const body = $("margins-body");
    body.replaceChildren(...rows.map(([name, dof, dm, fm]) => {
      const tr = document.createElement("tr");
      for (const t of [name, dof]) { const td = document.createElement("td"); td.textContent = t; tr.appendChild(td); }
      tr.appendChild(cell(dm));
      tr.appendChild(cell(fm));
      return tr;
    }));
  }

  // each thresholded indicator at the last sample, as the monitor compares it: "column energy_error 14.2 of 20"
  function renderIndicatorsNow() {
    const watched = (info.indicators || []).filter((ind) => ind.threshold != null);
    const box = $("integrity-now");
    const last = cols.time.length - 1;
    box.hidden = watched.length === 0 || last < 0;
    if (box.hidden) return;
    const now = watched.map((ind) => {
      const values = ind.columns.map((c, k) => cols.indicators[ind.offset + k][last]);
      const value = ind.columns.length === 1 && ind.columns[0] === "" ? values[0]
        : Math.max(...values.map((v) => Math.abs(v)));
      return [ind, value];
    });
    box.textContent = "integrity: " + now.map(([ind, v]) =>
      `${ind.module} ${ind.indicator} ${fmt(v, 4)} of ${fmt(ind.threshold, 4)}`).join(", ");
    box.className = now.some(([ind, v]) => v > ind.threshold) ? "alert" : "";
  }

  // the integrity crossings: module, indicator, value, threshold, step, time, the declared action
  function renderCrossings(p) {
    const crossings = p.crossings || [];
    $("crossings").hidden = crossings.length === 0;
    $("crossings-body").replaceChildren(...crossings.map((c) => {
      const tr = document.createElement("tr");
      for (const t of [c.module, c.indicator, fmt(c.value, 4), fmt(c.threshold, 4), c.step, c.time_s.toFixed(4), c.action]) {
        const td = document.createElement("td");
        td.textContent = t;
        tr.appendChild(td);
      }
      tr.className = c.action === "warn" ? "warn" : "danger";
      return tr;
    }));
  }

  function redraw() {
    if (!dirty || !info) return;
    dirty = false;
    for (const c of charts) c.plot.setData(c.data());
    renderStatus();
    redraws++;
  }

  function resize() {
    for (const c of charts) c.plot.setSize({ width: c.xy ? Math.min(chartWidth(), 520) : chartWidth(),
                                             height: c.plot.height });
  }

  let onState = null;
  window.addEventListener("resize", resize);
  setInterval(redraw, 200);

  return {
    reset, addFrame, redraw,
    onStateChange: (f) => { onState = f; },
    points: () => (cols ? cols.time.length : 0),
    steps: () => (cols ? cols.step : []),
    redraws: () => redraws,
    lastStep: () => (progress ? progress.step : -1),
    state: () => (progress ? progress.state : ""),
    plotted: (name) => {  // a chart's series labels and data as drawn (the tests read them)
      const c = charts.find((chart) => chart.name === name);
      return c ? { labels: c.plot.series.map((s) => s.label), data: c.data(), marks: c.marks ? c.marks() : [] } : null;
    },
    yRanges: () => charts.map((c) => [c.name, c.plot.scales.y.min, c.plot.scales.y.max]),
  };
})();
