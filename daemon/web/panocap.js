// panocap.js - the operator page's behaviour: polls the JSON API (relative
// URLs: api/status every second, the live picture four times a second and
// the thumbnails once a second while the page is visible), fills the page
// with DOM nodes (text only, never markup from the daemon), sends the
// control requests with the token the operator saved in this browser, and
// says plainly when the daemon stops answering (then carries on when it is
// back, restarted or not). The virtual cameras: each view's own live
// picture (four times a second while its card is on screen), its frame drawn on
// the live picture, steered by a click (aim there), a drag (move the frame),
// the wheel or a slider (zoom), the arrow and +/- keys, presets and follow;
// the picture's directions come from api/picture/map. No framework, no
// external resource.
'use strict';

const STATUS_MS = 1000;
const GONE_RETRY_MS = 2000;
const PICTURE_MS = 250;
const THUMB_MS = 1000;
const TIMEOUT_MS = 4000;
const TOKEN_KEY = 'panocap.token';

const $ = (id) => document.getElementById(id);

const state = {
  status: null,     // the last /api/status
  instance: null,   // its daemon.instance: a new one means a restart
  gone: false,
  goneSince: null,
  algos: null,      // /api/algos
  algoTouched: false,
  thumbs: [],       // per camera: {img, url, busy}
  snapshots: {},    // file -> 'asked' | 'downloaded'
  views: new Map(), // virtual camera name -> its card (makeViewCard)
  viewNames: '',    // the names the cards were made for
  map: null,        // api/picture/map: the live picture's directions
  mapKey: '',       // instance and picture size it was fetched for
  mapBusy: false,
};

// ---------------------------------------------------------------- helpers

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

async function fetchTimed(url, options) {
  const ctl = new AbortController();
  const t = setTimeout(() => ctl.abort(), TIMEOUT_MS);
  try {
    return await fetch(url, Object.assign({cache: 'no-store', signal: ctl.signal}, options || {}));
  } finally {
    clearTimeout(t);
  }
}

const nf = new Intl.NumberFormat(undefined);
function int(n) { return n === null || n === undefined ? '–' : nf.format(n); }
function fixed(n, d) { return n === null || n === undefined || n < 0 ? '–' : Number(n).toFixed(d); }
function bytes(n) {
  if (n === null || n === undefined || n < 0) return '–';
  const u = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < u.length - 1) { n /= 1000; i++; }
  return (i ? n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) : n) + ' ' + u[i];
}
function bitrate(bps) {
  if (bps === null || bps === undefined || bps < 0) return '–';
  return bps >= 1e6 ? (bps / 1e6).toFixed(2) + ' Mbit/s' : (bps / 1e3).toFixed(0) + ' kbit/s';
}
function age(s) {
  if (s === null || s === undefined) return 'never';
  if (s < 1) return (s * 1000).toFixed(0) + ' ms ago';
  if (s < 120) return s.toFixed(1) + ' s ago';
  if (s < 7200) return (s / 60).toFixed(0) + ' min ago';
  return (s / 3600).toFixed(1) + ' h ago';
}
function duration(s) {
  s = Math.floor(s);
  const d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60;
  if (d) return d + 'd ' + h + 'h';
  if (h) return h + 'h ' + m + 'm';
  return m + 'm ' + (s % 60) + 's';
}
function clock(d) { return d.toLocaleTimeString(); }

// Replaces the rows of a table's body with rows made by row(item).
function fillTable(table, items, row) {
  const tb = table.tBodies[0];
  tb.replaceChildren(...items.map(row));
}

// ---------------------------------------------------------------- rendering

function renderHeader(s) {
  const d = s.daemon, p = s.pipeline;
  const cams = s.cameras || [];
  const down = cams.filter((c) => !c.connected).length;
  const failing = s.outputs.filter((o) => o.state !== 'ok').length;
  const why = [];
  if (!d.healthy) why.push(d.health);
  if (down) why.push(down + ' camera' + (down > 1 ? 's' : '') + ' not streaming');
  if (failing) why.push(failing + ' output' + (failing > 1 ? 's' : '') + ' not writing');
  if (p.window_over_budget) why.push(int(p.window_over_budget) + ' frames over budget in ' + fixed(p.window_s, 0) + ' s');
  let cls = 'pill-ok', text = 'Running';
  if (!d.healthy) { cls = 'pill-bad'; text = 'Not healthy'; }
  else if (why.length) { cls = 'pill-warn'; text = 'Degraded'; }
  const pill = $('state');
  pill.className = 'pill ' + cls;
  pill.textContent = text;
  $('state-why').textContent = why.join(' · ');
  $('meta-algo').textContent = p.algo + ' / ' + p.backend;
  $('meta-fps').textContent = fixed(p.fps, 1) + ' fps';
  $('meta-uptime').textContent = 'up ' + duration(d.uptime_s);
  $('meta-version').textContent = 'v' + d.version;
  $('pipeline-health').textContent = d.healthy ? '' : d.health;
  $('foot-updated').textContent = 'updated ' + clock(new Date());
}

function renderCameras(s) {
  const cams = s.cameras || [];
  const connected = cams.filter((c) => c.connected).length;
  $('cameras-summary').textContent = connected + ' of ' + cams.length + ' connected';
  // rows are kept (their thumbnails keep loading); only the figures change
  const tb = $('camera-table').tBodies[0];
  if (tb.rows.length !== cams.length) {
    state.thumbs = cams.map((c, i) => ({img: el('img', {class: 'thumb', alt: 'Camera ' + i}), url: null, busy: false}));
    tb.replaceChildren(...cams.map((c, i) => {
      const tr = el('tr', {dataset: {camera: String(i)}});
      const labels = {name: 'Camera', thumb: 'Picture', state: 'State', fps: 'fps', frames: 'Frames',
        packets: 'Packets missing / resent', repaired: 'Repaired', substituted: 'Substituted', age: 'Last frame'};
      for (const k of Object.keys(labels)) {
        const td = el('td', {class: 'c-' + k + (['fps', 'frames', 'packets', 'repaired', 'substituted', 'age'].includes(k) ? ' num' : ''),
          dataset: {label: labels[k]}});
        if (k === 'thumb') td.append(state.thumbs[i].img);
        tr.append(td);
      }
      return tr;
    }));
  }
  cams.forEach((c, i) => {
    const r = tb.rows[i].cells;
    const skew = c.skew_offset_ms === null || c.skew_offset_ms === undefined ? ''
      : ' · skew ' + (c.skew_offset_ms >= 0 ? '+' : '−') + fixed(Math.abs(c.skew_offset_ms), 2) + ' ms';
    r[0].replaceChildren(el('span', {class: 'name'}, c.name), el('span', {class: 'sub'}, (c.model || '') + skew));
    const late = c.connected && c.last_frame_age_s !== null && c.last_frame_age_s > 1;
    const cls = !c.connected ? 'bad' : late ? 'warn' : 'ok';
    r[2].replaceChildren(el('span', {class: 'dot ' + cls}), c.connected ? (late ? 'late' : 'streaming') : c.state);
    r[3].textContent = fixed(c.fps, 1);
    r[4].textContent = int(c.frames);
    r[5].textContent = int(c.packets_missing) + ' / ' + int(c.packets_resent);
    r[6].textContent = int(c.frames_repaired);
    r[7].textContent = int(c.frames_substituted);
    r[7].className = 'c-substituted num' + (c.frames_substituted ? ' warn-text' : '');
    r[8].textContent = age(c.last_frame_age_s);
    r[8].className = 'c-age num' + (!c.connected ? ' bad-text' : late ? ' warn-text' : '');
    state.thumbs[i].url = c.picture;
    state.thumbs[i].img.hidden = !c.picture; /* none while the live picture is the panorama */
  });
}

function renderPipeline(s) {
  const p = s.pipeline;
  const facts = [
    ['Algorithm', p.algo + (p.variant && p.variant !== p.backend ? ', ' + p.variant + ' variant' : '')],
    ['Backend', p.backend],
    ['Layout', p.layout + (p.bands > 1 ? ', ' + p.bands + ' bands' : '')],
    ['Cameras', p.cameras + ' × ' + p.camera_size.width + '×' + p.camera_size.height],
    ['Picture', p.picture_size.width + '×' + p.picture_size.height],
    ['Frame rate', fixed(p.fps, 2) + ' of ' + fixed(p.fps_nominal, 2) + ' fps'],
    ['Frames', int(p.frames_in) + ' in, ' + int(p.frames_encoded) + ' encoded'],
    ['Dropped', int(p.frames_dropped)],
    ['Substituted', int(p.frames_substituted) + ' sets (' + int(p.slabs_substituted) + ' slabs)'],
    ['Over budget', int(p.over_budget) + ' (' + int(p.window_over_budget) + ' in the last ' + fixed(p.window_s, 0) + ' s), budget ' + fixed(p.budget_ms, 1) + ' ms'],
    ['Bitrate', bitrate(p.bitrate_bps)],
    ['Camera skew', !p.skew || p.skew.last_ms === null ? '–' : fixed(p.skew.last_ms, 2) + ' ms now, max ' +
      fixed(p.skew.max_ms, 2) + ' ms (limit ' + fixed(p.skew.limit_ms, 2) + ' ms, ' + int(p.skew.sets_over) + ' sets over)'],
  ];
  const dl = $('pipeline-facts');
  dl.replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  const dd = dl.querySelectorAll('dd');
  dd[7].className = p.frames_dropped ? 'warn-text' : '';
  dd[9].className = p.window_over_budget ? 'warn-text' : '';
  dd[11].className = p.skew && p.skew.sets_over ? 'warn-text' : '';
  fillTable($('stage-table'), Object.entries(p.stages), ([name, st]) => el('tr', {},
    el('td', {}, name),
    el('td', {class: 'num'}, fixed(st.p50_ms, 2)),
    el('td', {class: 'num' + (st.p99_ms > p.budget_ms && name !== 'queue' ? ' warn-text' : '')}, fixed(st.p99_ms, 2)),
    el('td', {class: 'num'}, fixed(st.max_ms, 2))));
}

function renderEncoding(s) {
  const enc = s.encoders || [], outs = s.outputs || [];
  $('encoding-summary').textContent = enc.length ? enc.length + ' encoder' + (enc.length > 1 ? 's' : '') + ', ' +
    outs.length + ' output' + (outs.length !== 1 ? 's' : '') : 'no encoder (output null)';
  fillTable($('encoder-table'), enc, (e) => el('tr', {},
    el('td', {}, el('span', {class: 'name'}, e.encoder), el('span', {class: 'sub'}, e.codec)),
    el('td', {}, e.preview ? 'preview ' + e.width + '×' + e.height : 'band ' + e.band + ', rows ' + e.first_row + '–' + (e.first_row + e.rows - 1)),
    el('td', {class: 'num'}, bitrate(e.bitrate_bps)),
    el('td', {class: 'num'}, bitrate(e.bitrate_out_bps)),
    el('td', {class: 'num'}, int(e.frames)),
    el('td', {class: 'num'}, int(e.keyframes)),
    el('td', {class: 'num' + (e.encode_load > 0.9 ? ' bad-text' : e.encode_load > 0.7 ? ' warn-text' : ''),
      title: e.encode_ms != null ? 'mean encode ' + fixed(e.encode_ms, 2) + ' ms a frame' : ''},
      e.encode_load != null ? Math.round(e.encode_load * 100) + ' %' : '–')));
  fillTable($('output-table'), outs, (o) => el('tr', {},
    el('td', {class: 'wrap'}, o.url, o.preview ? el('span', {class: 'sub'}, 'preview') : null),
    el('td', {}, el('span', {class: 'dot ' + (o.state === 'ok' ? 'ok' : o.state === 'failed' ? 'bad' : 'warn')}), o.state),
    el('td', {class: 'num'}, int(o.packets_written)),
    el('td', {class: 'num' + (o.packets_dropped ? ' warn-text' : '')}, int(o.packets_dropped)),
    el('td', {class: 'num' + (o.errors ? ' bad-text' : '')}, int(o.errors)),
    el('td', {class: 'num'}, o.write ? fixed(o.write.p99_ms, 2) : '–'),
    el('td', {class: 'wrap' + (o.last_error ? ' bad-text' : '')}, o.last_error || '–')));
  $('recordings').replaceChildren(...outs.filter((o) => o.recording).map(renderRecording));
}

function usageBar(frac) {
  const f = Math.max(0, Math.min(1, frac));
  return el('div', {class: 'bar' + (f > 0.95 ? ' bad' : f > 0.8 ? ' warn' : ''), role: 'img',
    'aria-label': (f * 100).toFixed(0) + ' %'}, el('span'));
}

function renderRecording(o) {
  const r = o.recording;
  const box = el('div', {class: 'recording'}, el('div', {}, el('span', {class: 'name'}, 'Recording folder '), r.folder));
  const lines = [];
  if (r.max_bytes > 0 && r.used_bytes !== null) {
    const bar = usageBar(r.used_bytes / r.max_bytes);
    bar.firstChild.style.width = Math.min(100, 100 * r.used_bytes / r.max_bytes).toFixed(1) + '%';
    lines.push(el('div', {}, 'Segments take ' + bytes(r.used_bytes) + ' of the ' + bytes(r.max_bytes) + ' limit (' + int(r.segments) + ' files)'), bar);
  } else if (r.used_bytes !== null) {
    lines.push(el('div', {}, 'Segments take ' + bytes(r.used_bytes) + ' (' + int(r.segments) + ' files), no size limit'));
  } else {
    lines.push(el('div', {class: 'muted'}, r.segment_s ? 'Segments of ' + r.segment_s + ' s, no retention limit' : 'One file, no retention limit'));
  }
  if (r.free_bytes !== null && r.disk_bytes) {
    const used = 1 - r.free_bytes / r.disk_bytes;
    const bar = usageBar(used);
    bar.firstChild.style.width = (100 * used).toFixed(1) + '%';
    const low = r.min_free > 0 && r.free_bytes < r.min_free;
    lines.push(el('div', {class: low ? 'warn-text' : ''}, 'Disk: ' + bytes(r.disk_bytes - r.free_bytes) + ' used, ' +
      bytes(r.free_bytes) + ' free of ' + bytes(r.disk_bytes) +
      (r.min_free > 0 ? ', keeps ' + bytes(r.min_free) + ' free' : '')), bar);
  }
  const extra = [];
  if (r.max_age_s > 0) extra.push('deletes segments older than ' + duration(r.max_age_s));
  if (r.files_deleted) extra.push(int(r.files_deleted) + ' deleted so far');
  if (r.waiting_for_space) extra.push('waiting for free space');
  if (extra.length) lines.push(el('div', {class: 'muted small'}, extra.join('; ')));
  box.append(...lines);
  return box;
}

function renderControl(s) {
  const c = s.control;
  const token = localStorage.getItem(TOKEN_KEY) || '';
  let note;
  if (!c.enabled) note = 'control over HTTP is off on this daemon (daemon.http_token_file)';
  else if (!token) note = 'enter the control token to use these';
  else note = 'token saved in this browser';
  $('control-state').textContent = note;
  const can = c.enabled && !!token;
  for (const id of ['algo-apply', 'wb-auto', 'wb-freeze', 'idr', 'snapshot']) $(id).disabled = !can;
  if (!c.idr) $('idr').disabled = true;
  if (!c.snapshots) { $('snapshot').disabled = true; $('snapshot').title = 'daemon.snapshot_dir is empty'; }
  // the algorithm in force, unless the operator is choosing another one
  if (state.algos && !state.algoTouched && document.activeElement !== $('algo')) $('algo').value = s.pipeline.algo;
  const wb = (s.white_balance && s.white_balance.cameras) || [];
  const auto = wb.filter((x) => x.auto).length, frozen = wb.filter((x) => x.frozen).length;
  $('wb-state').textContent = frozen ? 'frozen (' + frozen + ' of ' + wb.length + ' cameras)' :
    auto ? 'automatic (' + auto + ' of ' + wb.length + ' cameras)' : 'fixed gains (none is "auto" in the configuration)';
  $('wb-auto').className = frozen ? 'off' : 'on';
  $('wb-freeze').className = frozen ? 'on' : 'off';
  if (!auto && !frozen) { $('wb-auto').disabled = true; $('wb-freeze').disabled = true; }
  $('wb-auto').setAttribute('aria-pressed', String(!frozen && auto > 0));
  $('wb-freeze').setAttribute('aria-pressed', String(frozen > 0));
  const snaps = (s.snapshots || []).slice(0, 4);
  $('snapshots').hidden = snaps.length === 0;
  $('snapshot-list').replaceChildren(...snaps.map((sn) => el('li', {},
    sn.state === 'written' ? el('a', {href: sn.url, download: sn.file}, sn.file) : el('span', {}, sn.file),
    el('span', {class: sn.state === 'failed' ? 'bad-text' : 'muted', title: sn.error || null},
      sn.state === 'failed' ? 'failed' : sn.state))));
  // a snapshot asked for here is downloaded once written
  for (const sn of s.snapshots || []) {
    if (state.snapshots[sn.file] !== 'asked') continue;
    if (sn.state === 'written') {
      state.snapshots[sn.file] = 'downloaded';
      const a = el('a', {href: sn.url, download: sn.file});
      document.body.append(a);
      a.click();
      a.remove();
      say('Snapshot ' + sn.file + ' written; downloading it.', true);
    } else if (sn.state === 'failed') {
      state.snapshots[sn.file] = 'failed';
      say('Snapshot failed: ' + sn.error, false);
    }
  }
}

// ---------------------------------------------------------------- virtual cameras

const SVG = 'http://www.w3.org/2000/svg';
const VIEW_COLOURS = ['#ffcc00', '#00e5ff', '#ff5cf0', '#7dff6b', '#ff8a3d', '#b18cff', '#ffffff', '#ff4d4d'];
const DRAG_PX = 4;       // a pointer that moved less is a click
const ZOOM_STEP = 1.15;  // one wheel notch or +/- key
const SEND_AFTER_MS = 250; // wheel and keys: sent once they pause

function wrapPan(p) {
  p = ((p + 180) % 360 + 360) % 360 - 180;
  return p === -180 ? 180 : p;
}

// The direction the live picture shows at (x, y) (its pixels): the tile
// holding it, bilinear between the four grid points around (pans unwrapped
// against the first, so the seam at 180 degrees does not tear); null where
// no camera sees it.
function mapAt(x, y) {
  const m = state.map;
  if (!m) return null;
  for (const t of m.tiles) {
    if (x < t.x || x > t.x + t.w || y < t.y || y > t.y + t.h) continue;
    let u = (x - t.x) / t.w * (t.cols - 1), w = (y - t.y) / t.h * (t.rows - 1);
    const i = Math.min(Math.floor(u), t.cols - 2), j = Math.min(Math.floor(w), t.rows - 2);
    u -= i; w -= j;
    const k = [j * t.cols + i, j * t.cols + i + 1, (j + 1) * t.cols + i, (j + 1) * t.cols + i + 1];
    const wt = [(1 - u) * (1 - w), u * (1 - w), (1 - u) * w, u * w];
    if (k.some((q) => t.pan[q] === null)) return null;
    const p0 = t.pan[k[0]];
    let pan = 0, tilt = 0;
    for (let q = 0; q < 4; q++) {
      pan += wt[q] * (p0 + wrapPan(t.pan[k[q]] - p0));
      tilt += wt[q] * t.tilt[k[q]];
    }
    return {pan: wrapPan(pan), tilt};
  }
  return null;
}

async function loadMap(key) {
  state.mapBusy = true;
  try {
    const r = await fetchTimed('api/picture/map');
    if (r.ok) {
      state.map = await r.json();
      state.mapKey = key;
    }
  } catch (e) { /* the status poll says when the daemon is gone */ }
  state.mapBusy = false;
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

// One view's frame: its goal dashed (while it moves), where it is solid,
// its name at its first corner.
function frameGroup(v, colour, label) {
  const g = svgEl('g', {'data-view': v.name});
  const lines = (outline, cls) => {
    const sub = svgEl('g', {class: cls});
    for (const l of outline || []) {
      const pts = [];
      for (let k = 0; k + 1 < l.length; k += 2) pts.push(l[k] + ',' + l[k + 1]);
      sub.append(svgEl('polyline', {points: pts.join(' '), stroke: colour}));
    }
    return sub;
  };
  if (v.moving) g.append(lines(v.goal_outline, 'goal'));
  g.append(lines(v.outline, 'pose'));
  const first = (v.outline || [])[0];
  if (label && first && first.length >= 2) {
    const t = svgEl('text', {x: first[0] + 3, y: first[1] + 14, fill: colour, 'font-size': 13});
    t.textContent = v.name;
    g.append(t);
  }
  return g;
}

function drawFrames(svg, views, w, h, only) {
  svg.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
  svg.replaceChildren(...views.map((v, i) => ({v, i})).filter(({v}) => !only || v.name === only)
    .map(({v, i}) => frameGroup(v, VIEW_COLOURS[i % VIEW_COLOURS.length], !only)));
}

function viewSay(card, text, ok) {
  card.msg.textContent = text;
  card.msg.className = 'msg ' + (ok ? 'ok' : 'bad');
}

function canSteer() {
  const s = state.status;
  return !!(s && s.control.enabled && localStorage.getItem(TOKEN_KEY));
}

// Sends one view command (api/views/NAME); says what the daemon answered.
async function viewPost(card, body) {
  if (!canSteer()) {
    viewSay(card, state.status && !state.status.control.enabled ? 'Control over HTTP is off on this daemon.'
      : 'Enter the control token (Control, above) to steer the views.', false);
    return null;
  }
  const j = await post(card.url, body, (t, ok) => viewSay(card, t, ok));
  if (j) {
    viewSay(card, j.answer.replace(/^OK /, ''), true);
    if (j.status) updateViewCard(card, j.status, state.status);
    refreshSoon();
  }
  return j;
}

function picPoint(card, ev) {
  const r = card.canvas.getBoundingClientRect(), W = card.canvas.width, H = card.canvas.height;
  return {x: (ev.clientX - r.left) / r.width * W, y: (ev.clientY - r.top) / r.height * H, sx: ev.clientX, sy: ev.clientY};
}

function makeViewCard(v, i) {
  const colour = VIEW_COLOURS[i % VIEW_COLOURS.length];
  const id = 'view-' + i;
  const card = {name: v.name, url: v.url, view: v, drag: null, pending: null, timer: null, presetKey: null,
    onScreen: false, outBusy: false};
  // its own picture: what the view shows (its live picture, when it has one)
  card.out = el('img', {class: 'view-out', alt: v.name + ': what it shows, live', width: String(v.width),
    height: String(v.height), dataset: {view: v.name}});
  card.outBox = el('figure', {class: 'view-out-box'}, card.out,
    el('figcaption', {class: 'muted small'}, 'What it shows'));
  card.canvas = el('canvas', {width: 1, height: 1});
  card.svg = svgEl('svg', {class: 'frames', 'aria-hidden': 'true', preserveAspectRatio: 'none'});
  card.pic = el('div', {class: 'view-pic', tabindex: '0', role: 'application', 'aria-describedby': id + '-help',
    'aria-label': v.name + ': where it points on the live picture'}, card.canvas);
  card.pic.append(card.svg);
  card.info = el('span', {class: 'muted small'});
  card.pose = el('p', {class: 'view-pose', id: id + '-pose'});
  card.zoom = el('input', {type: 'range', class: 'view-zoom', id: id + '-zoom', step: '0.5', min: '1', max: '179'});
  card.zoomOut = el('output', {for: id + '-zoom'});
  card.pan = el('input', {type: 'number', step: '0.1', id: id + '-pan', 'aria-label': 'pan, degrees'});
  card.tilt = el('input', {type: 'number', step: '0.1', id: id + '-tilt', 'aria-label': 'tilt, degrees'});
  card.hfov = el('input', {type: 'number', step: '0.1', id: id + '-hfov', 'aria-label': 'field of view, degrees'});
  card.go = el('button', {type: 'submit'}, 'Go');
  card.form = el('form', {class: 'row view-goto', novalidate: ''},
    el('label', {for: id + '-pan'}, 'Pan'), card.pan, el('label', {for: id + '-tilt'}, 'Tilt'), card.tilt,
    el('label', {for: id + '-hfov'}, 'Field of view'), card.hfov, card.go);
  card.presets = el('div', {class: 'view-presets', role: 'group', 'aria-label': v.name + ' presets'});
  card.saveName = el('input', {type: 'text', id: id + '-save', placeholder: 'preset name', spellcheck: 'false',
    autocomplete: 'off'});
  card.save = el('button', {type: 'submit', class: 'quiet'}, 'Save here');
  card.saveForm = el('form', {class: 'view-save'}, card.saveName, card.save);
  card.follow = el('button', {type: 'button', 'aria-pressed': 'false'}, 'Follow the play');
  card.stop = el('button', {type: 'button', class: 'quiet'}, 'Stop');
  card.msg = el('p', {class: 'msg', role: 'status', 'aria-live': 'polite'});
  const swatch = el('span', {class: 'view-swatch'});
  swatch.style.background = colour; /* a property, not a style attribute: the page's CSP allows no inline style */
  card.el = el('div', {class: 'view', dataset: {view: v.name}},
    el('div', {class: 'view-head'}, el('h3', {}, swatch, v.name), card.info),
    el('div', {class: 'view-pics'}, card.outBox,
      el('figure', {class: 'view-pic-box'}, card.pic, el('figcaption', {class: 'muted small'}, 'Where it points'))),
    el('p', {class: 'muted small', id: id + '-help'}, 'Click the picture to aim there, drag the frame to move it, ' +
      'wheel to zoom; with the picture focused, arrow keys turn and + / − zoom.'),
    card.pose,
    el('div', {class: 'row'}, el('label', {for: id + '-zoom'}, 'Zoom'), card.zoom, card.zoomOut),
    card.form,
    el('div', {class: 'row'}, el('span', {class: 'label'}, 'Presets'), card.presets, card.saveForm),
    el('div', {class: 'row'}, card.follow, card.stop),
    card.msg);

  // the picture: click to aim, drag to move the frame, wheel to zoom
  card.pic.addEventListener('pointerdown', (ev) => {
    if (ev.button !== 0) return;
    if (!state.map) {
      viewSay(card, 'The live picture\'s map has not come yet: try again in a second.', false);
      return;
    }
    const p = picPoint(card, ev);
    card.drag = {p0: p, at0: mapAt(p.x, p.y), goal: Object.assign({}, card.view.goal), moved: false};
    card.pic.setPointerCapture(ev.pointerId);
    card.pic.focus();
    ev.preventDefault();
  });
  card.pic.addEventListener('pointermove', (ev) => {
    const d = card.drag;
    if (!d) return;
    const p = picPoint(card, ev);
    if (Math.hypot(p.sx - d.p0.sx, p.sy - d.p0.sy) >= DRAG_PX) d.moved = true;
    if (d.moved) { // the frame follows the pointer until it is let go
      const g = card.svg.querySelector('g');
      if (g) g.setAttribute('transform', 'translate(' + (p.x - d.p0.x) + ' ' + (p.y - d.p0.y) + ')');
    }
  });
  const endDrag = (ev, send) => {
    const d = card.drag;
    card.drag = null;
    if (!d) return;
    const g = card.svg.querySelector('g');
    if (g) g.removeAttribute('transform');
    if (!send) return;
    const p = picPoint(card, ev), at = mapAt(p.x, p.y);
    if (!d.moved) {
      if (!at) { viewSay(card, 'No camera sees that point.', false); return; }
      viewPost(card, {pan: +at.pan.toFixed(2), tilt: +at.tilt.toFixed(2)});
    } else {
      if (!at || !d.at0) { viewSay(card, 'Drag within the cameras\' pictures.', false); return; }
      viewPost(card, {pan: +wrapPan(d.goal.pan + wrapPan(at.pan - d.at0.pan)).toFixed(2),
        tilt: +(d.goal.tilt + at.tilt - d.at0.tilt).toFixed(2)});
    }
  };
  card.pic.addEventListener('pointerup', (ev) => endDrag(ev, true));
  card.pic.addEventListener('pointercancel', (ev) => endDrag(ev, false));
  card.pic.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    queueMove(card, 0, 0, ev.deltaY > 0 ? ZOOM_STEP : 1 / ZOOM_STEP);
  }, {passive: false});
  card.pic.addEventListener('keydown', (ev) => {
    const step = Math.max(0.5, card.view.goal.hfov / 10);
    const keys = {ArrowLeft: [-step, 0, 1], ArrowRight: [step, 0, 1], ArrowUp: [0, step, 1], ArrowDown: [0, -step, 1],
      '+': [0, 0, 1 / ZOOM_STEP], '=': [0, 0, 1 / ZOOM_STEP], '-': [0, 0, ZOOM_STEP], '_': [0, 0, ZOOM_STEP]};
    const k = keys[ev.key];
    if (!k) return;
    ev.preventDefault();
    queueMove(card, k[0], k[1], k[2]);
  });
  // the controls
  card.zoom.addEventListener('input', () => { card.zoomOut.textContent = Number(card.zoom.value).toFixed(1) + '°'; });
  card.zoom.addEventListener('change', () => viewPost(card, {hfov: Number(card.zoom.value)}));
  for (const t of ['input', 'change']) card.form.addEventListener(t, () => { card.formDirty = true; });
  card.form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    card.formDirty = false;
    const body = {pan: card.pan.valueAsNumber, tilt: card.tilt.valueAsNumber};
    if (card.hfov.value !== '') body.hfov = card.hfov.valueAsNumber;
    viewPost(card, body); // the daemon checks the values and says why it refuses one
  });
  card.saveForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (await viewPost(card, {save: card.saveName.value.trim()})) card.saveName.value = '';
  });
  card.follow.addEventListener('click', () => viewPost(card, {follow: !card.view.follow}));
  card.stop.addEventListener('click', () => viewPost(card, {stop: true}));
  return card;
}

// Wheel and keys: relative moves gathered while they come quickly, sent
// as one when they pause (the daemon takes 5 commands a second).
function queueMove(card, dpan, dtilt, zoom) {
  const q = card.pending || (card.pending = {pan: 0, tilt: 0, zoom: 1});
  q.pan += dpan;
  q.tilt += dtilt;
  q.zoom *= zoom;
  const g = card.view.goal;
  card.pose.textContent = 'to pan ' + wrapPan(g.pan + q.pan).toFixed(1) + '°, tilt ' + (g.tilt + q.tilt).toFixed(1) +
    '°, field of view ' + (g.hfov * q.zoom).toFixed(1) + '° …';
  clearTimeout(card.timer);
  card.timer = setTimeout(() => {
    const p = card.pending;
    card.pending = null;
    const dh = card.view.goal.hfov * (p.zoom - 1);
    viewPost(card, {move: {pan: +p.pan.toFixed(2), tilt: +p.tilt.toFixed(2), hfov: +dh.toFixed(2)}});
  }, SEND_AFTER_MS);
}

function updateViewCard(card, v, s) {
  card.view = v;
  card.info.textContent = v.width + '×' + v.height + ' · ' + (v.follow ? 'follows the play' : 'manual') + ' · ' +
    (v.moving ? 'moving' : 'still') + (v.picture ? '' : ' · no live picture of its own: its frame on the live picture');
  card.outBox.hidden = !v.picture;
  if (!card.pending)
    card.pose.textContent = 'pan ' + v.pan.toFixed(1) + '°, tilt ' + v.tilt.toFixed(1) + '°, field of view ' +
      v.hfov.toFixed(1) + '°' + (v.moving ? ' → pan ' + v.goal.pan.toFixed(1) + '°, tilt ' + v.goal.tilt.toFixed(1) +
      '°, ' + v.goal.hfov.toFixed(1) + '°' : '');
  card.zoom.min = String(v.min_hfov);
  card.zoom.max = String(v.max_hfov);
  if (document.activeElement !== card.zoom) {
    card.zoom.value = String(v.goal.hfov);
    card.zoomOut.textContent = v.goal.hfov.toFixed(1) + '°';
  }
  if (!card.formDirty && !card.form.contains(document.activeElement)) {
    card.pan.value = v.goal.pan.toFixed(1);
    card.tilt.value = v.goal.tilt.toFixed(1);
    card.hfov.value = v.goal.hfov.toFixed(1);
  }
  const pk = v.presets.join('\n');
  if (pk !== card.presetKey) {
    card.presetKey = pk;
    card.presets.replaceChildren(...(v.presets.length ? v.presets.map((name) => {
      const b = el('button', {type: 'button', class: 'quiet', dataset: {preset: name}}, name);
      b.addEventListener('click', () => viewPost(card, {preset: name}));
      return b;
    }) : [el('span', {class: 'muted small'}, 'none yet')]));
  }
  card.follow.setAttribute('aria-pressed', String(v.follow));
  card.follow.className = v.follow ? 'on' : 'off';
  card.follow.textContent = v.follow ? 'Following the play' : 'Follow the play';
  const can = canSteer();
  for (const b of [card.go, card.save, card.follow, card.stop, card.zoom, ...card.presets.querySelectorAll('button')])
    b.disabled = !can;
  if (s && !card.drag) {
    const W = s.picture.width || 1, H = s.picture.height || 1;
    if (card.canvas.width !== W || card.canvas.height !== H) {
      card.canvas.width = W;
      card.canvas.height = H;
      drawViewPicture(card);
    }
    drawFrames(card.svg, s.views, W, H, v.name);
  }
}

function drawViewPicture(card) {
  const img = $('live-img');
  if (!img.naturalWidth) return;
  card.canvas.getContext('2d').drawImage(img, 0, 0, card.canvas.width, card.canvas.height);
}

function renderViews(s) {
  const views = s.views || [];
  $('views-none').hidden = views.length > 0;
  $('views-note').textContent = views.length ? views.length + ' view' + (views.length > 1 ? 's' : '') +
    (s.picture.available ? '' : '; no live picture to aim on') : '';
  const names = views.map((v) => v.name).join('\n');
  if (names !== state.viewNames) {
    state.viewNames = names;
    state.views = new Map(views.map((v, i) => [v.name, makeViewCard(v, i)]));
    $('view-list').replaceChildren(...[...state.views.values()].map((c) => c.el));
    watchCards();
  }
  for (const v of views) updateViewCard(state.views.get(v.name), v, s);
  const key = s.daemon.instance + ' ' + s.picture.width + 'x' + s.picture.height;
  if (views.length && s.picture.available && key !== state.mapKey && !state.mapBusy) loadMap(key);
  drawFrames($('live-frames'), views, s.picture.width || 1, s.picture.height || 1, null);
}

// A status read now, outside the poll's rhythm (after a command).
async function refreshSoon() {
  try {
    const r = await fetchTimed('api/status');
    if (r.ok) {
      state.status = await r.json();
      render(state.status);
    }
  } catch (e) { /* the poll says when the daemon is gone */ }
}

function renderPictureInfo(s) {
  const p = s.picture;
  $('live-none').hidden = p.available;
  $('live-none').textContent = p.available ? '' : 'No live picture: ' + p.note;
  $('live-caption').textContent = p.available ? p.width + '×' + p.height + ', ' + p.source + ', ' + p.fps +
    ' a second' : '';
}

function render(s) {
  renderHeader(s);
  renderCameras(s);
  renderPipeline(s);
  renderEncoding(s);
  renderControl(s);
  renderViews(s);
  renderPictureInfo(s);
}

// ---------------------------------------------------------------- polling

function setGone(gone, why) {
  if (gone && !state.gone) {
    state.goneSince = new Date();
  }
  state.gone = gone;
  document.body.classList.toggle('gone', gone);
  $('gone').hidden = !gone;
  if (gone) {
    $('gone-detail').textContent = 'No answer since ' + clock(state.goneSince) + (why ? ' (' + why + ')' : '') + '.';
    const pill = $('state');
    pill.className = 'pill pill-bad';
    pill.textContent = 'Not answering';
    $('state-why').textContent = '';
  }
}

async function loadAlgos() {
  const r = await fetchTimed('api/algos');
  if (!r.ok) return;
  state.algos = (await r.json()).algos;
  const sel = $('algo');
  sel.replaceChildren(...state.algos.map((a) => el('option', {value: a.name}, a.name + ' – ' + a.title)));
  if (state.status) sel.value = state.status.pipeline.algo;
  updateVariants();
}

function updateVariants() {
  const a = (state.algos || []).find((x) => x.name === $('algo').value);
  for (const o of $('variant').options) o.disabled = a ? !a.variants.includes(o.value) : false;
  if ($('variant').selectedOptions[0] && $('variant').selectedOptions[0].disabled) $('variant').value = 'auto';
}

async function pollStatus() {
  let next = STATUS_MS;
  try {
    const r = await fetchTimed('api/status');
    if (!r.ok) throw new Error('HTTP ' + r.status);
    const s = await r.json();
    const restarted = state.instance && s.daemon.instance !== state.instance;
    const wasGone = state.gone;
    state.instance = s.daemon.instance;
    state.status = s;
    setGone(false);
    if (restarted || !state.algos) await loadAlgos();
    if (restarted) notice('panocap restarted at ' + clock(new Date(s.daemon.started_unix_s * 1000)) + '.');
    else if (wasGone) notice('panocap answers again (it did not restart).');
    render(s);
  } catch (e) {
    setGone(true, e.name === 'AbortError' ? 'timed out' : e.message);
    next = GONE_RETRY_MS;
  }
  setTimeout(pollStatus, next);
}

let noticeTimer = null;
function notice(text) {
  $('notice').textContent = text;
  $('notice').hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { $('notice').hidden = true; }, 10000);
}

// Loads url into img (through a blob, so that a failed load keeps the
// last picture); returns the picture's number or null.
async function loadPicture(img, url) {
  const r = await fetchTimed(url);
  if (!r.ok) return null;
  const seq = r.headers.get('X-Panocap-Picture');
  const blob = await r.blob();
  const obj = URL.createObjectURL(blob);
  await new Promise((resolve) => {
    const old = img.dataset.obj;
    img.onload = img.onerror = () => { if (old) URL.revokeObjectURL(old); resolve(); };
    img.dataset.obj = obj;
    img.src = obj;
  });
  return seq;
}

function watching() {
  return !document.hidden && !state.gone && state.status && state.status.picture.available;
}

async function pictureLoop() {
  if (watching()) {
    try {
      const seq = await loadPicture($('live-img'), state.status.picture.url);
      if (seq !== null) {
        $('live-img').dataset.seq = seq;
        for (const card of state.views.values()) drawViewPicture(card);
      }
    } catch (e) { /* the status poll says when the daemon is gone */ }
  }
  setTimeout(pictureLoop, watching() ? PICTURE_MS : 1000);
}

// The views' own pictures are fetched only for the cards on screen: the
// daemon makes a view's picture only while someone asks for it.
let cardWatcher = null;
function watchCards() {
  if (!('IntersectionObserver' in window)) {
    for (const card of state.views.values()) card.onScreen = true;
    return;
  }
  if (cardWatcher) cardWatcher.disconnect();
  cardWatcher = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const card = state.views.get(e.target.dataset.view);
      if (card) card.onScreen = e.isIntersecting;
    }
  });
  for (const card of state.views.values()) cardWatcher.observe(card.out);
}

async function viewLoop() {
  if (!document.hidden && !state.gone && state.status) {
    await Promise.all([...state.views.values()].map(async (card) => {
      if (!card.view.picture || !card.onScreen || card.outBusy) return;
      card.outBusy = true;
      try { await loadPicture(card.out, card.view.picture); } catch (e) { /* the status poll says when it is gone */ }
      card.outBusy = false;
    }));
  }
  setTimeout(viewLoop, PICTURE_MS);
}

async function thumbLoop() {
  if (watching()) {
    await Promise.all(state.thumbs.map(async (t) => {
      if (!t.url || t.busy) return;
      t.busy = true;
      try { await loadPicture(t.img, t.url); } catch (e) { /* as above */ }
      t.busy = false;
    }));
  }
  setTimeout(thumbLoop, THUMB_MS);
}

// ---------------------------------------------------------------- control

function say(text, ok) {
  const m = $('control-msg');
  m.textContent = text;
  m.className = 'msg ' + (ok ? 'ok' : 'bad');
}

// POSTs body as JSON with the saved token; the answer's object, or null
// after telling why (tell: where the message goes).
async function post(path, body, tell) {
  tell = tell || say;
  const token = localStorage.getItem(TOKEN_KEY) || '';
  let r;
  try {
    r = await fetchTimed(path, {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Panocap-Token': token},
      body: JSON.stringify(body || {})});
  } catch (e) {
    tell('No answer from panocap: ' + e.message, false);
    return null;
  }
  let j = null;
  try { j = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) {
    tell((r.status === 403 || r.status === 400 ? 'Refused: ' : 'Error ' + r.status + ': ') +
      (j && j.error ? j.error : r.statusText), false);
    return null;
  }
  return j || {};
}

function setup() {
  $('token').value = localStorage.getItem(TOKEN_KEY) || '';
  $('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const t = $('token').value.trim();
    if (t) localStorage.setItem(TOKEN_KEY, t); else localStorage.removeItem(TOKEN_KEY);
    say(t ? 'Token saved in this browser.' : 'Token removed.', true);
    if (state.status) render(state.status);
  });
  $('token-forget').addEventListener('click', () => {
    localStorage.removeItem(TOKEN_KEY);
    $('token').value = '';
    say('Token removed from this browser.', true);
    if (state.status) render(state.status);
  });
  $('algo').addEventListener('change', () => { state.algoTouched = true; updateVariants(); });
  $('algo-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const j = await post('api/algo', {algo: $('algo').value, variant: $('variant').value});
    state.algoTouched = false;
    if (j) say('Switching to ' + j.algo + ' (' + j.variant + ') from the next frame set.', true);
  });
  $('wb-auto').addEventListener('click', async () => {
    if (await post('api/wb', {mode: 'auto'})) say('White balance automatic again.', true);
  });
  $('wb-freeze').addEventListener('click', async () => {
    const j = await post('api/wb', {mode: 'freeze'});
    if (j) say('White balance frozen at the gains in force.', true);
  });
  $('idr').addEventListener('click', async () => {
    if (await post('api/idr', {})) say('Keyframe asked of every encoder.', true);
  });
  $('snapshot').addEventListener('click', async () => {
    const j = await post('api/snapshot', {});
    if (!j) return;
    state.snapshots[j.file] = 'asked';
    say('Snapshot ' + j.file + ' asked for; it downloads when written.', true);
  });
  pollStatus();
  pictureLoop();
  thumbLoop();
  viewLoop();
}

document.addEventListener('DOMContentLoaded', setup);
