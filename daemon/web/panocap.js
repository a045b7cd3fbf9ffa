// panocap.js - the operator page's behaviour: polls the JSON API (relative
// URLs: api/status every second, the live picture four times a second and
// the thumbnails once a second while the page is visible), fills the page
// with DOM nodes (text only, never markup from the daemon), sends the
// control requests with the token the operator saved in this browser, and
// says plainly when the daemon stops answering (then carries on when it is
// back, restarted or not). No framework, no external resource.
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
    r[0].replaceChildren(el('span', {class: 'name'}, c.name), el('span', {class: 'sub'}, c.model || ''));
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
  ];
  const dl = $('pipeline-facts');
  dl.replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  const dd = dl.querySelectorAll('dd');
  dd[7].className = p.frames_dropped ? 'warn-text' : '';
  dd[9].className = p.window_over_budget ? 'warn-text' : '';
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
    el('td', {class: 'num'}, int(e.keyframes))));
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

function renderViews(s) {
  const views = s.views || [];
  $('views-none').hidden = views.length > 0;
  $('view-list').replaceChildren(...views.map((v) => el('div', {class: 'recording'},
    el('span', {class: 'name'}, v.name || 'view'))));
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
      if (seq !== null) $('live-img').dataset.seq = seq;
    } catch (e) { /* the status poll says when the daemon is gone */ }
  }
  setTimeout(pictureLoop, watching() ? PICTURE_MS : 1000);
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

async function post(path, body) {
  const token = localStorage.getItem(TOKEN_KEY) || '';
  let r;
  try {
    r = await fetchTimed(path, {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Panocap-Token': token},
      body: JSON.stringify(body || {})});
  } catch (e) {
    say('No answer from panocap: ' + e.message, false);
    return null;
  }
  let j = null;
  try { j = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) {
    say((r.status === 403 ? 'Refused: ' : 'Error ' + r.status + ': ') + (j && j.error ? j.error : r.statusText), false);
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
    if (state.status) renderControl(state.status);
  });
  $('token-forget').addEventListener('click', () => {
    localStorage.removeItem(TOKEN_KEY);
    $('token').value = '';
    say('Token removed from this browser.', true);
    if (state.status) renderControl(state.status);
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
}

document.addEventListener('DOMContentLoaded', setup);
