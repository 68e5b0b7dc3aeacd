// Gulfstream memory editor. Memory text is only ever put into the page with textContent.
"use strict";

// Every phrase of the page as [key, English, Chinese], so a translation cannot go missing.
const PHRASES = [
  ["title", "Memories", "记忆"],
  ["search", "Search memories…", "搜索记忆…"],
  ["allThemes", "All themes", "全部主题"],
  ["add", "Add", "新增"],
  ["recentlyDeleted", "Recently deleted", "最近删除"],
  ["export", "Export", "导出"],
  ["import", "Import", "导入"],
  ["activity", "Live changes", "实时变更"],
  ["edit", "Edit", "编辑"],
  ["merge", "Merge", "合并"],
  ["history", "History", "历史"],
  ["delete", "Delete", "删除"],
  ["restore", "Restore", "恢复"],
  ["undo", "Undo", "撤销"],
  ["deleted", "Deleted", "已删除"],
  ["restored", "Restored", "已恢复"],
  ["save", "Save", "保存"],
  ["cancel", "Cancel", "取消"],
  ["close", "Close", "关闭"],
  ["description", "Description", "描述"],
  ["theme", "Theme", "主题"],
  ["reason", "Reason (goes into the history)", "原因（写入历史）"],
  ["reasonOptional", "Reason (optional)", "原因（可选）"],
  ["mergeWith", "Merge with", "合并对象"],
  ["updated", "Updated", "更新于"],
  ["hits", "Hits", "命中"],
  ["items", "memories", "条记忆"],
  ["shown", "shown", "已显示"],
  ["live", "Live", "实时"],
  ["offline", "Offline", "离线"],
  ["liveTitle", "Updates as memory changes", "记忆变化时自动更新"],
  ["noMemories", "No memories yet.", "还没有记忆。"],
  ["noDeleted", "Nothing was deleted.", "没有删除的记忆。"],
  ["editTitle", "Edit memory", "编辑记忆"],
  ["mergeTitle", "Merge two memories", "合并两条记忆"],
  ["addTitle", "Add a memory", "新增记忆"],
  ["historyTitle", "History", "历史"],
  ["statusTitle", "Self-check", "自检"],
  ["rerun", "Run self-check again", "重新自检"],
  ["issues", "Issues", "问题"],
  ["recallPending", "Vectors are still being made: {e} of {l} memories have one; the others are found by BM25 (words) only meanwhile.",
    "向量仍在生成：{l} 条记忆中已有 {e} 条；其余的暂时只按 BM25（词语）检索。"],
  ["recallFailed", "Making vectors failed ({x}): retrieval uses BM25 only meanwhile.", "生成向量失败（{x}）：暂时只用 BM25 检索。"],
  ["recallShort", "BM25 only", "仅 BM25"],
  ["repaired", "Repaired", "已修复"],
  ["imported", "Imported: {a} added, {s} already present, {r} other versions kept in Recently deleted.",
    "导入完成：新增 {a}，已存在 {s}，{r} 个其他版本放入最近删除。"],
  ["mergedInto", "merged into", "已合并到"],
  ["nothingToMerge", "There is no other memory to merge with.", "没有可以合并的其他记忆。"],
  ["user", "User", "用户"],
  ["modelCalls", "Model calls so far", "模型调用累计"],
  ["noModelCalls", "No model calls recorded yet.", "还没有模型调用记录。"],
  ["calls", "calls", "次调用"],
  ["tokensIn", "tokens in", "输入 token"],
  ["tokensOut", "out", "输出"],
  ["conversations", "Conversations", "对话记录"],
  ["purpose_chat", "chat", "对话"],
  ["purpose_retrieval", "retrieval", "检索"],
  ["purpose_writer", "memory writer", "记忆写入"],
  ["purpose_summary", "summaries", "摘要"],
  ["admission", "Admission", "准入"],
  ["decision_write", "written now", "立即写入"],
  ["decision_batch", "batched", "批量写入"],
  ["decision_skip", "skipped", "跳过"],
  ["action_create", "created", "创建"],
  ["action_update", "edited", "编辑"],
  ["action_delete", "deleted", "删除"],
  ["action_restore", "restored", "恢复"],
  ["action_merge", "merged", "合并"],
  ["action_merged_into", "merged into another", "并入其他记忆"],
  ["action_import", "imported", "导入"],
  ["action_repair", "repaired", "修复"],
  ["action_purge", "purged", "彻底删除"],
  ["action_hit", "used", "使用"],
  ["action_stale", "date passed (stale)", "日期已过（过期）"],
  ["action_archived", "archived (cold)", "已归档（不常用）"],
  ["action_change", "changed", "变更"],
  ["branch", "branch", "分支"],
  ["branchTitle", "Branch memory: seen only by runs of thread {t} from checkpoint {c} on (turn {u})",
    "分支记忆：只有会话 {t} 中从检查点 {c} 之后的运行能看到（轮次 {u}）"],
  ["replaces", "replaces {id}", "取代 {id}"],
  ["replacesTitle", "This branch's own version of {id}; the other branches still read {id}",
    "这是本分支对 {id} 的新版本；其他分支仍读取 {id}"],
  ["supersededBy", "replaced in a later branch by {ids} · other branches still see this one",
    "已在后续分支中被 {ids} 取代 · 其他分支仍能看到这一条"],
  ["conflict", "Someone else changed this memory after you opened it. Nothing was saved; the page now shows the current version.",
    "打开后这条记忆已被他人修改。未保存任何内容；页面已显示最新版本。"],
  ["currentVersion", "Current version", "当前版本"],
  ["waiting", "Changes made by you or the memory agent appear here.", "你或记忆代理做出的修改会显示在这里。"],
  ["more", "Show more ({n} more)", "显示更多（还有 {n} 条）"],
  ["sortNewest", "Newest first", "最新优先"],
  ["sortHotness", "Hottest first", "最热优先"],
  ["groupTheme", "Group by theme", "按主题分组"],
  ["groupTopic", "Group by topic", "按话题分组"],
  ["hotness", "Hotness", "热度"],
  ["cold", "cold", "冷"],
  ["coldTitle", "Not used for a long time: consolidation may archive it (restorable)",
    "很久没有用到：整理时可能被归档（可恢复）"],
  ["consolidate", "Tidy up", "整理"],
  ["consolidateTitle", "Consolidation", "整理记忆"],
  ["consolidateDone", "Merged {m} duplicates into {g} memories, marked {s} stale, archived {a}; {k} memories kept.",
    "把 {m} 条重复记忆合并为 {g} 条，标记 {s} 条已过期，归档 {a} 条；保留 {k} 条记忆。"],
  ["consolidateRefused", "Nothing was changed:", "没有做任何修改："],
  ["consolidateUndo", "Everything merged or archived is in Recently deleted and can be restored.",
    "合并或归档的记忆都在“最近删除”中，可以恢复。"],
  ["erase", "Erase for good", "永久抹除"],
  ["eraseTitle", "Erase this memory for good?", "永久抹除这条记忆？"],
  ["eraseWarning", "It goes with its history, the archived messages that said it, its digests, snapshots and journal rows. Nothing can bring it back; Delete can be undone instead.",
    "它的历史、说过它的存档消息、摘要、快照和日志记录都会一起删除，无法恢复；“删除”则可以撤销。"],
  ["erased", "Erased for good", "已永久抹除"],
  ["eraseUser", "Delete this user's data", "删除此用户的数据"],
  ["eraseUserTitle", "Delete every memory and conversation record of {user}?", "删除 {user} 的全部记忆和对话记录？"],
  ["eraseUserWarning", "Memories, the conversation archive, digests, snapshots, the write journal and usage of this user are erased for good. Other users are not touched.",
    "此用户的记忆、对话存档、摘要、快照、写入日志和用量记录将被永久删除，其他用户不受影响。"],
  ["typeToConfirm", "Type {word} to confirm", "输入 {word} 以确认"],
  ["eraseNothing", "Nothing was stored.", "没有存储任何内容。"],
  ["threadsDeleted", "Threads deleted", "已删除的对话"],
  ["lastUsed", "Last given to a reply", "上次用于回答"],
  ["neverUsed", "never", "从未"],
  ["profile", "Profile", "个人资料"],
  ["profileTitle", "What every reply starts from", "每次回答的出发点"],
  ["persona", "Persona (empty: the app's own)", "人设（留空：使用应用自带的）"],
  ["human", "About you (written by you, the memory agent stops rewriting it)",
    "关于你（由你填写后，记忆代理不再改写）"],
  ["profileSaved", "Profile saved", "个人资料已保存"],
];
const TEXT = { en: {}, zh: {} };
for (const [key, en, zh] of PHRASES) {
  TEXT.en[key] = en;
  TEXT.zh[key] = zh;
}

// `cards` holds the cards on the page (one page of the waterfall and those loaded after it);
// a live change patches only the cards it names.
const state = { lang: "en", revision: "", themes: {}, total: 0, matched: 0, cards: {}, groups: new Map(),
  query: "", theme: "", nextCursor: null, loading: false, generation: 0,
  sort: "newest", group: "theme", topicCounts: {} };
const PAGE_SIZE = 200;
const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);

function t(key) {
  return (TEXT[state.lang] && TEXT[state.lang][key]) || TEXT.en[key] || key;
}

function actionLabel(action) {
  return TEXT.en["action_" + action] ? t("action_" + action) : String(action || "");
}

// Build elements from plain values: strings become text nodes, never markup.
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// ── talking to the API ─────────────────────────────────────────────────
function authHeaders() {
  const headers = {};
  const token = sessionStorage.getItem("gulfstream-token");
  if (token) headers.Authorization = "Bearer " + token;
  if (params.get("user")) headers["X-Gulfstream-User"] = params.get("user");
  return headers;
}

class ApiFailure extends Error {
  constructor(message, field, status) { super(message); this.field = field; this.status = status; }
}

async function api(method, path, body) {
  const headers = { Accept: "application/json", ...authHeaders() };
  const init = { method, headers, credentials: "same-origin" };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    headers["X-Gulfstream-CSRF"] = "1";
    init.body = JSON.stringify(body || {});
  }
  const response = await fetch("api/" + path, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiFailure(data.error || response.statusText, data.field, response.status);
  return data;
}

// ── rendering ──────────────────────────────────────────────────────────
function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  if (isNaN(date)) return iso;
  return date.toLocaleString(state.lang === "zh" ? "zh-CN" : "en-US",
    { dateStyle: "medium", timeStyle: "short" });
}

function applyLanguage() {
  document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
  document.title = "Gulfstream · " + t("title");
  document.querySelectorAll("[data-i18n]").forEach((n) => { n.textContent = t(n.dataset.i18n); });
  document.querySelectorAll("[data-i18n-placeholder]").forEach((n) => { n.placeholder = t(n.dataset.i18nPlaceholder); });
  document.querySelectorAll("[data-i18n-title]").forEach((n) => { n.title = t(n.dataset.i18nTitle); });
  $("lang").textContent = state.lang === "zh" ? "English" : "中文";
}

function fill(key, values) {
  return Object.entries(values).reduce((text, [name, value]) => text.split("{" + name + "}").join(value), t(key));
}

// Scope and copy-on-write lineage: a branch memory and its newer version must not look like duplicates.
function lineage(card) {
  const origin = card.origin || {};
  const badges = [];
  if (card.scope === "branch") badges.push(el("span", { class: "badge branch",
    title: fill("branchTitle", { t: origin.thread_id || "?", c: origin.checkpoint_id || "?", u: origin.turn_id || "?" }) },
    t("branch")));
  if (card.supersedes) badges.push(el("span", { class: "badge replaces", title: fill("replacesTitle", { id: card.supersedes }) },
    fill("replaces", { id: card.supersedes })));
  if (card.superseded_by && card.superseded_by.length) badges.push(el("span", { class: "badge superseded" },
    fill("supersededBy", { ids: card.superseded_by.join(", ") })));
  return badges.length ? el("p", { class: "lineage" }, badges) : null;
}

function renderCard(card) {
  // A live patch's card does not read the recall log: keep what the list said.
  if (card.last_used === undefined && state.cards[card.id]) card.last_used = state.cards[card.id].last_used;
  state.cards[card.id] = card;
  const classes = "card" + (card.superseded_by && card.superseded_by.length ? " superseded" : "")
    + (card.cold ? " cold" : "");
  return el("article", { class: classes, dataset: { id: card.id, scope: card.scope || "user" } },
    lineage(card),
    el("p", { class: "description" }, card.description),
    el("p", { class: "meta" },
      el("span", { class: "updated" }, t("updated") + " " + when(card.latest_update_time)),
      el("span", { class: "hits" }, t("hits") + " " + card.hit),
      card.last_used !== undefined ? el("span", { class: "last-used" },
        t("lastUsed") + " " + (card.last_used ? when(card.last_used) : t("neverUsed"))) : null,
      state.hotness === false ? null : el("span", { class: "hotness" }, t("hotness") + " " + Number(card.hotness ?? 0).toFixed(2)),  // # feature: hotness
      card.cold ? el("span", { class: "badge cold", title: t("coldTitle") }, t("cold")) : null),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "edit", onclick: () => editCard(card) }, t("edit")),
      el("button", { type: "button", class: "merge", onclick: () => mergeCard(card) }, t("merge")),
      el("button", { type: "button", class: "history", onclick: () => showHistory(card.id) }, t("history")),
      el("button", { type: "button", class: "delete danger", onclick: () => deleteCard(card) }, t("delete")),
      el("button", { type: "button", class: "erase danger", onclick: () => eraseCard(card) }, t("erase"))));
}

// ── the waterfall: one page at a time, patched card by card ───────────
function themeOptions() {
  const filter = $("theme-filter");
  filter.replaceChildren(el("option", { value: "" }, t("allThemes")),
    ...Object.entries(state.themes).map(([name, count]) => el("option", { value: name }, `${name} (${count})`)));
  filter.value = state.themes[state.theme] ? state.theme : "";
}

function groupCount(key) {
  const section = state.groups.get(key);
  const shown = section ? section.querySelectorAll(".card").length : 0;
  if (state.query) return shown;
  return (state.group === "topic" ? state.topicCounts[key] : state.themes[key]) ?? shown;
}

// The default view (newest first, by theme) is patched card by card; the others are asked again.
function defaultView() {
  return !state.query && state.sort === "newest" && state.group === "theme";
}

function updateSummary() {
  for (const [theme, section] of state.groups) section.querySelector(".count").textContent = groupCount(theme);
  const shown = Object.keys(state.cards).length;
  $("summary").textContent = `${state.total} ${t("items")} · ${shown} ${t("shown")}`;
  const more = $("more");
  more.hidden = !state.nextCursor;
  more.textContent = fill("more", { n: Math.max(state.matched - shown, 0) });
  if (!state.groups.size && !$("waterfall").querySelector(".empty"))
    $("waterfall").replaceChildren(el("p", { class: "empty" }, t("noMemories")));
}

// The section of a theme (or a topic), made (first or last) when it is not on the page yet.
function groupFor(key, atTop, name) {
  let section = state.groups.get(key);
  if (!section) {
    const dataset = state.group === "topic" ? { group: key, topic: key } : { group: key, theme: key };
    section = el("section", { class: "group", dataset },
      el("h2", {}, el("span", { class: "theme-name" }, name ?? key), el("span", { class: "count" }, "")));
    state.groups.set(key, section);
    $("waterfall").querySelector(".empty")?.remove();
    if (atTop) $("waterfall").prepend(section); else $("waterfall").append(section);
  }
  return section;
}

function appendGroups(groups) {
  for (const group of groups) {
    const name = state.lang === "zh" ? (group.name_zh || group.name) : (group.name || group.name_zh);
    for (const card of group.cards) {
      if (state.cards[card.id]) continue;  // already patched in by a live change
      groupFor(group.key ?? group.theme, false, name).append(renderCard(card));
    }
  }
}

function cardNode(id) {
  return $("waterfall").querySelector(`.card[data-id="${CSS.escape(id)}"]`);
}

function removeCard(id) {
  const node = cardNode(id);
  delete state.cards[id];
  if (!node) return;
  const section = node.closest(".group");
  node.remove();
  if (section && !section.querySelector(".card")) {
    state.groups.delete(section.dataset.group);
    section.remove();
  }
}

// Put a changed card where a fresh load would: first in its theme, its theme first (newest first).
// A card whose time and theme did not move (a hit, a badge) is redrawn where it is.
function upsertCard(card) {
  const node = cardNode(card.id);
  const shown = state.cards[card.id];
  if (!defaultView()) {  // a search, the hottest first, topics: patch the card in place and ask again
    if (node && !card.deleted) node.replaceWith(renderCard(card));
    return scheduleSearch();
  }
  if (node && shown && !card.deleted && shown.theme === card.theme
      && shown.latest_update_time === card.latest_update_time) {
    node.replaceWith(renderCard(card));
    return updateSummary();
  }
  removeCard(card.id);
  if (card.deleted || (state.theme && card.theme !== state.theme)) return updateSummary();
  const section = groupFor(card.theme, true);
  section.querySelector("h2").after(renderCard(card));
  $("waterfall").prepend(section);
  updateSummary();
}

let searchTimer;
function scheduleSearch() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(refresh, 100);
}

function pageQuery(after) {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (state.query) query.set("q", state.query);
  if (state.theme) query.set("theme", state.theme);
  if (state.sort !== "newest") query.set("sort", state.sort);
  if (state.group !== "theme") query.set("group", state.group);
  if (after) query.set("after", after);
  return "memories?" + query;
}

function takePage(data) {
  state.revision = data.revision;
  state.themes = data.themes;
  state.total = data.total;
  state.matched = data.matched;
  state.nextCursor = data.next_cursor;
  state.topicCounts = data.topics || {};
}

function renderWaterfall(data) {
  state.generation += 1;  // a page still loading for the previous list is dropped
  takePage(data);
  state.cards = {};
  state.groups = new Map();
  $("waterfall").replaceChildren();
  themeOptions();
  appendGroups(data.groups);
  updateSummary();
}

async function refresh() {
  try {
    renderWaterfall(await api("GET", pageQuery()));
  } catch (error) {
    toast(error.message);
  }
}

async function loadMore() {
  if (!state.nextCursor || state.loading) return;
  state.loading = true;
  const generation = state.generation;
  try {
    const data = await api("GET", pageQuery(state.nextCursor));
    if (generation !== state.generation) return;
    state.nextCursor = data.next_cursor;
    state.matched = data.matched;
    if (data.topics) Object.assign(state.topicCounts, data.topics);
    appendGroups(data.groups);
    updateSummary();
  } catch (error) {
    toast(error.message);
  } finally {
    state.loading = false;
  }
}

// A live change: patch the cards it names, newest last so that it ends up first.
function applyChange(payload) {
  const cards = Object.entries(payload.cards || {});
  cards.sort(([, a], [, b]) => String(a?.latest_update_time || "").localeCompare(String(b?.latest_update_time || "")));
  for (const [id, card] of cards) card ? upsertCard(card) : removeCard(id);
  if (payload.themes) { state.themes = payload.themes; themeOptions(); }
  if (payload.total !== undefined) state.total = payload.total;
  if (!state.query && payload.themes)
    state.matched = state.theme ? (payload.themes[state.theme] || 0) : payload.total;
  updateSummary();
}

// Fetch these cards again and patch them in; returns {id: card, or null when it is gone}.
async function refetchCards(ids) {
  const fetched = {};
  for (const id of ids) {
    try {
      fetched[id] = await api("GET", "memories/" + encodeURIComponent(id));
      upsertCard(fetched[id]);
    } catch (failure) {
      if (failure.status !== 404) throw failure;
      fetched[id] = null;
      removeCard(id);
    }
  }
  return fetched;
}

async function refreshStatus() {
  try {
    const status = await api("GET", "status");
    $("user").textContent = t("user") + ": " + status.user_id;
    const badge = $("status");
    const recall = recallNote(status.recall);
    badge.textContent = recall ? `${status.status} · ${t("recallShort")}` : status.status;
    badge.title = recall;
    if (status.recall && status.recall.pending) setTimeout(refreshStatus, 5000);  // until done
    badge.className = "pill status " + status.status.toLowerCase();
    // Read again on click: the model calls move with every turn, not only with memory writes.
    badge.onclick = () => api("GET", "status").then(showStatus, () => showStatus(status));
  } catch (error) {
    toast(error.message);
  }
}

function toast(message, action) {
  const box = $("toast");
  box.replaceChildren(el("span", {}, message), action || "");
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, action ? 8000 : 4000);
}

// ── the modal form ─────────────────────────────────────────────────────
function openForm(title, fields, submitLabel, onSubmit) {
  const dialog = $("dialog");
  const error = el("p", { class: "error", role: "alert" });
  const inputs = {};
  const rows = fields.map((field) => {
    let input;
    if (field.type === "textarea") input = el("textarea", { name: field.name, rows: "4" });
    else if (field.type === "select") input = el("select", { name: field.name },
      field.options.map(([value, label]) => el("option", { value }, label)));
    else input = el("input", { name: field.name, type: "text", autocomplete: "off" });
    input.value = field.value || "";
    if (field.required) input.required = true;
    if (field.onchange) input.addEventListener("change", () => field.onchange(input.value, inputs));
    inputs[field.name] = input;
    return el("label", { class: "field" }, el("span", {}, field.label), input);
  });
  const form = el("form", { method: "dialog" }, el("h3", {}, title), rows, error,
    el("div", { class: "buttons" },
      el("button", { type: "button", class: "cancel", onclick: () => dialog.close() }, t("cancel")),
      el("button", { type: "submit", class: "primary" }, submitLabel)));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    Object.values(inputs).forEach((i) => i.classList.remove("invalid"));
    const values = Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value]));
    try {
      await onSubmit(values);
      dialog.close();
    } catch (failure) {
      error.textContent = failure.message;
      if (failure.field && inputs[failure.field]) inputs[failure.field].classList.add("invalid");
    }
  });
  dialog.replaceChildren(form);
  dialog.showModal();
}

function showPanel(title, body) {
  const dialog = $("dialog");
  dialog.replaceChildren(el("div", { class: "panel" }, el("h3", {}, title), body,
    el("div", { class: "buttons" }, el("button", { type: "button", onclick: () => dialog.close() }, t("close")))));
  if (!dialog.open) dialog.showModal();
}

// ── actions ────────────────────────────────────────────────────────────
function editCard(shown) {
  let card = shown;  // the version the form was opened on; moves only after a conflict is shown
  openForm(t("editTitle"), [
    { name: "description", label: t("description"), type: "textarea", value: card.description, required: true },
    { name: "theme", label: t("theme"), value: card.theme, required: true },
    { name: "reason", label: t("reason"), required: true },
  ], t("save"), async (v) => {
    const body = { reason: v.reason, expected_update_time: card.latest_update_time };
    if (v.description !== card.description) body.description = v.description;
    if (v.theme !== card.theme) body.theme = v.theme;
    if (!body.description && !body.theme) body.description = v.description;
    upsertCard(await guarded(() => api("PATCH", "memories/" + encodeURIComponent(card.id), body),
      { expected_update_time: card.id }, (fresh) => { if (fresh) card = fresh; }));
  });
}

// A 409 means the memory changed after the page read it: show the current version, say so, and
// let the user decide again (the form stays open with their text; the next save is checked anew).
async function guarded(send, ids, onFresh) {
  try {
    return await send();
  } catch (failure) {
    if (failure.status !== 409 || !String(failure.field || "").startsWith("expected_")) throw failure;
    const fetched = await refetchCards(Object.values(ids));
    const found = fetched[ids[failure.field]];
    const fresh = found && !found.deleted ? found : null;
    if (onFresh) onFresh(fresh);
    const now = fresh ? ` ${t("currentVersion")}: ${fresh.description}` : "";
    throw new ApiFailure(t("conflict") + now, failure.field, 409);
  }
}

function mergeCard(shown) {
  let card = shown;
  const seen = { ...state.cards };  // the versions the form was opened on
  const others = Object.values(state.cards).filter((c) => c.id !== card.id);
  if (!others.length) return toast(t("nothingToMerge"));
  const suggest = (other) => card.description + "；" + other.description;
  openForm(t("mergeTitle"), [
    { name: "other_id", label: t("mergeWith"), type: "select", value: others[0].id,
      options: others.map((c) => [c.id, `[${c.theme}] ${c.description.slice(0, 60)}`]),
      onchange: (id, inputs) => { inputs.description.value = suggest(state.cards[id]); } },
    { name: "description", label: t("description"), type: "textarea", value: suggest(others[0]), required: true },
    { name: "theme", label: t("theme"), value: card.theme, required: true },
    { name: "reason", label: t("reason"), required: true },
  ], t("merge"), async (v) => {
    const other = seen[v.other_id] || {};
    const kept = await guarded(() => api("POST", "merge", { id: card.id, ...v, expected_update_time: card.latest_update_time,
      expected_other_update_time: other.latest_update_time }),
    { expected_update_time: card.id, expected_other_update_time: v.other_id }, () => {
      card = state.cards[card.id] || card;
      Object.assign(seen, state.cards);
    });
    removeCard(v.other_id);
    upsertCard(kept);
  });
}

// The core context the user owns: the persona and what the assistant knows about them.
async function editProfile() {
  const profile = await api("GET", "profile");
  openForm(t("profileTitle"), [
    { name: "persona", label: t("persona"), type: "textarea", value: profile.persona },
    { name: "human", label: t("human"), type: "textarea", value: profile.human },
  ], t("save"), async (v) => { await api("PUT", "profile", v); toast(t("profileSaved")); });
}

function addCard() {
  openForm(t("addTitle"), [
    { name: "description", label: t("description"), type: "textarea", required: true },
    { name: "theme", label: t("theme"), value: state.theme, required: true },
    { name: "reason", label: t("reasonOptional") },
  ], t("save"), async (v) => { const added = await api("POST", "memories", v); await refetchCards([added.id]); });
}

async function deleteCard(card) {
  try {
    await guarded(() => api("DELETE", "memories/" + encodeURIComponent(card.id),
      { expected_update_time: card.latest_update_time }), { expected_update_time: card.id });
  } catch (error) {
    return toast(error.message);
  }
  removeCard(card.id);
  updateSummary();
  const undo = el("button", { type: "button", class: "undo", onclick: () => restoreCard(card.id) }, t("undo"));
  toast(`${t("deleted")}: ${card.description.slice(0, 40)}`, undo);
}

async function restoreCard(id) {
  try {
    upsertCard(await api("POST", "memories/" + encodeURIComponent(id) + "/restore", {}));
    $("toast").hidden = true;
    toast(t("restored"));
  } catch (error) {
    toast(error.message);
  }
}

function historyEntry(entry) {
  const details = [];
  if (entry.description) details.push(el("p", { class: "description" }, entry.description));
  if (entry.previous_description && entry.previous_description !== entry.description)
    details.push(el("p", { class: "previous" }, entry.previous_description));
  if (entry.merged_description) details.push(el("p", { class: "previous" }, "+ " + entry.merged_description));
  if (entry.into) details.push(el("p", {}, t("mergedInto") + " " + entry.into));
  return el("li", { class: "entry " + (entry.action || "") },
    el("p", { class: "meta" }, el("strong", {}, actionLabel(entry.action)),
      " · " + when(entry.time), entry.theme ? " · " + entry.theme : ""),
    entry.reason ? el("p", { class: "reason" }, entry.reason) : null, details);
}

async function showHistory(id) {
  try {
    const data = await api("GET", "memories/" + encodeURIComponent(id));
    showPanel(t("historyTitle"), el("ol", { class: "timeline" }, data.history.map(historyEntry)));
  } catch (error) {
    toast(error.message);
  }
}

async function showDeleted() {
  const data = await api("GET", "deleted");
  const rows = data.items.map((card) => el("li", { class: "deleted-item", dataset: { id: card.id } },
    el("p", { class: "description" }, card.description),
    el("p", { class: "meta" }, `${card.theme} · ${when(card.latest_update_time)}`,
      card.into ? ` · ${t("mergedInto")} ${card.into}` : "", card.deleted_reason ? ` · ${card.deleted_reason}` : ""),
    el("button", { type: "button", class: "restore", onclick: async () => { await restoreCard(card.id); showDeleted(); } },
      t("restore")),
    el("button", { type: "button", class: "erase danger", onclick: () => eraseCard(card) }, t("erase"))));
  showPanel(t("recentlyDeleted"), rows.length ? el("ul", { class: "deleted-list" }, rows) : el("p", {}, t("noDeleted")));
}

// ── erase for good: a confirmation first, the report after ─────────────
function confirmDialog(title, lines, word, submitLabel, onConfirm) {
  const dialog = $("dialog");
  const error = el("p", { class: "error", role: "alert" });
  const input = word ? el("input", { name: "confirm", type: "text", autocomplete: "off" }) : null;
  const form = el("form", { method: "dialog", class: "confirm" }, el("h3", {}, title),
    lines.map((line) => el("p", { class: line.cls || "" }, line.text)),
    input ? el("label", { class: "field" }, el("span", {}, fill("typeToConfirm", { word })), input) : null,
    error,
    el("div", { class: "buttons" },
      el("button", { type: "button", class: "cancel", onclick: () => dialog.close() }, t("cancel")),
      el("button", { type: "submit", class: "primary danger confirm-erase" }, submitLabel)));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (input && input.value.trim() !== word) {
      error.textContent = fill("typeToConfirm", { word });
      return input.classList.add("invalid");
    }
    try {
      await onConfirm();
    } catch (failure) {
      error.textContent = failure.message;
    }
  });
  dialog.replaceChildren(form);
  dialog.showModal();
}

function erasureReport(report) {
  const rows = Object.entries(report.removed || {}).map(([where, count]) => el("li", {}, `${where}: ${count}`));
  return el("div", { class: "erase-report" },
    rows.length ? el("ul", { class: "removed" }, rows) : el("p", {}, t("eraseNothing")),
    report.threads_deleted && report.threads_deleted.length
      ? el("p", {}, `${t("threadsDeleted")}: ${report.threads_deleted.join(", ")}`) : null,
    (report.notes || []).map((note) => el("p", { class: "hint" }, note)));
}

function eraseCard(card) {
  confirmDialog(t("eraseTitle"), [{ text: card.description, cls: "description" }, { text: t("eraseWarning"), cls: "hint" }],
    null, t("erase"), async () => {
      const report = await api("POST", "memories/" + encodeURIComponent(card.id) + "/erase", { confirm: card.id });
      removeCard(card.id);
      updateSummary();
      showPanel(t("erased"), erasureReport(report));
    });
}

async function eraseUser() {
  const who = await api("GET", "whoami");
  confirmDialog(fill("eraseUserTitle", { user: who.user_id }), [{ text: t("eraseUserWarning"), cls: "hint" }],
    who.user_id, t("eraseUser"), async () => {
      const report = await api("POST", "erase-user", { confirm: who.user_id });
      showPanel(t("erased"), erasureReport(report));
      await refresh();
    });
}

function usageList(usage) {
  const rows = Object.entries(usage || {}).map(([purpose, u]) => el("li", { class: "usage" },
    `${t("purpose_" + purpose)}: ${u.calls} ${t("calls")} · ${u.input_tokens} ${t("tokensIn")} / ${u.output_tokens} ${t("tokensOut")}`));
  return [el("h4", {}, t("modelCalls")), rows.length ? el("ul", { class: "usage-list" }, rows) : el("p", {}, t("noModelCalls"))];
}

// While vectors are made after a bulk load, retrieval is BM25 only for the memories without one.
function recallNote(recall) {
  if (!recall) return "";
  if (recall.error) return t("recallFailed").replace("{x}", recall.error);
  if (!recall.pending) return "";
  return t("recallPending").replace("{e}", recall.embedded).replace("{l}", recall.live);
}

function showStatus(status) {
  const list = (label, items) => items.length ? [el("h4", {}, label), el("ul", {}, items.map((i) => el("li", {}, i)))] : [];
  showPanel(`${t("statusTitle")}: ${status.status}`, el("div", {},
    el("p", {}, `${status.backend} · ${status.item_count ?? "?"} ${t("items")}`),
    recallNote(status.recall) ? el("p", { class: "recall-note" }, recallNote(status.recall)) : [],
    list(t("issues"), status.issues), list(t("repaired"), status.repaired), usageList(status.usage),
    el("button", { type: "button", onclick: async () => {
      const fresh = await api("POST", "self-check", {}); await refreshStatus(); showStatus(fresh);
    } }, t("rerun"))));
}

// A consolidation pass on demand; the report says what changed (or why nothing did).
async function consolidateMemories() {
  const report = await api("POST", "consolidate", {});
  const merged = Object.values(report.merged || {}).reduce((n, ids) => n + ids.length, 0);
  const line = report.refused ? `${t("consolidateRefused")} ${report.refused}` : t("consolidateDone")
    .replace("{m}", merged).replace("{g}", Object.keys(report.merged || {}).length)
    .replace("{s}", report.staled.length).replace("{a}", report.archived.length).replace("{k}", report.kept);
  showPanel(t("consolidateTitle"), el("div", { class: "consolidation-report" }, el("p", {}, line),
    report.refused ? "" : el("p", { class: "hint" }, t("consolidateUndo"))));
  await refresh();
}

async function exportMemories() {
  const response = await fetch("api/export", { headers: authHeaders() });
  const blob = await response.blob();
  const link = el("a", { href: URL.createObjectURL(blob), download: "gulfstream-memories.json" });
  document.body.append(link);
  link.click();
  link.remove();
}

async function importMemories(file) {
  try {
    const outcome = await api("POST", "import", JSON.parse(await file.text()));
    toast(t("imported").replace("{a}", outcome.added.length)
      .replace("{r}", Object.keys(outcome.superseded).length).replace("{s}", outcome.skipped.length));
    await refresh();
  } catch (error) {
    toast(error.field ? `${error.field}: ${error.message}` : error.message);
  }
}

// ── live updates: SSE read through fetch, so the same auth headers go with it ──
function addActivity(row, isTrace) {
  const action = actionLabel(row.action);
  const admission = row.tool === "admission";
  const label = admission ? `${t("admission")}: ${t("decision_" + row.action)}` : (row.tool || action);
  const item = el("li", { class: admission ? `trace admission ${row.action}` : (isTrace ? "trace" : "change") },
    el("span", { class: "when" }, when(row.time)), " ",
    el("strong", {}, label), " ",
    el("span", { class: "what" }, row.description || row.summary || row.id || ""),
    row.reason ? el("span", { class: "why" }, " — " + row.reason) : null);
  $("activity-empty").hidden = true;
  $("activity").prepend(item);
  while ($("activity").children.length > 30) $("activity").lastChild.remove();
}

function setLive(on) {
  $("live").className = "live " + (on ? "on" : "off");
  $("live-text").textContent = on ? t("live") : t("offline");
}

async function listen() {
  for (;;) {
    try {
      const response = await fetch("api/events?since=" + encodeURIComponent(state.revision),
        { headers: { Accept: "text/event-stream", ...authHeaders() } });
      if (!response.ok || !response.body) throw new Error("stream " + response.status);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          handleFrame(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch (error) {
      console.warn("event stream:", error.message);
    }
    setLive(false);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

function handleFrame(frame) {
  let event = "message";
  const data = [];
  for (const line of frame.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
  }
  if (!data.length) return;
  const payload = JSON.parse(data.join("\n"));
  if (event === "hello") setLive(true);
  if (event === "change") {
    payload.changes.forEach((row) => addActivity(row, false));
    (payload.trace || []).forEach((row) => addActivity(row, true));
    if (payload.resync) { refresh(); refreshStatus(); return; }
    if (payload.revision !== state.revision) {
      state.revision = payload.revision;
      applyChange(payload);
      refreshStatus();
    }
  }
}

// The optional features the deployment turned off leave no link, option or figure on the page.
async function showFeatures() {
  const who = await api("GET", "whoami").catch(() => ({}));
  const features = who.features || {};
  if (features.archive === false) $("to-conversations").remove();  // # feature: archive
  state.hotness = features.hotness !== false;  // # feature: hotness
  if (!state.hotness) document.querySelector('#sort option[value="hotness"]').remove();  // # feature: hotness
  if (features.topics === false) document.querySelector('#group option[value="topic"]').remove();  // # feature: topics
}

// ── start ──────────────────────────────────────────────────────────────
function start() {
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("token")) {  // a token in the fragment never reaches a server log; keep it per tab
    sessionStorage.setItem("gulfstream-token", hash.get("token"));
    history.replaceState(null, "", location.pathname + location.search);
  }
  $("to-conversations").href = "conversations/" + location.search;  // the same user. # feature: archive
  const saved = localStorage.getItem("gulfstream-lang");
  state.lang = params.get("lang") || saved || ((navigator.language || "en").startsWith("zh") ? "zh" : "en");
  applyLanguage();
  $("lang").addEventListener("click", () => {
    state.lang = state.lang === "zh" ? "en" : "zh";
    localStorage.setItem("gulfstream-lang", state.lang);
    applyLanguage(); refresh(); refreshStatus(); setLive($("live").classList.contains("on"));
  });
  let typing;
  $("search").addEventListener("input", (e) => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.query = e.target.value.trim(); refresh(); }, 250);
  });
  $("theme-filter").addEventListener("change", (e) => { state.theme = e.target.value; refresh(); });
  $("sort").addEventListener("change", (e) => { state.sort = e.target.value; refresh(); });
  $("group").addEventListener("change", (e) => { state.group = e.target.value; refresh(); });
  $("add").addEventListener("click", addCard);
  $("profile").addEventListener("click", () => editProfile().catch((e) => toast(e.message)));
  $("more").addEventListener("click", loadMore);
  // Scrolling to the end of the list loads the next page.
  new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) loadMore(); })
    .observe($("more"));
  $("show-deleted").addEventListener("click", () => showDeleted().catch((e) => toast(e.message)));
  $("export").addEventListener("click", () => exportMemories().catch((e) => toast(e.message)));
  $("consolidate").hidden = false;  // # feature: consolidation
  $("consolidate").addEventListener("click", () => consolidateMemories().catch((e) => toast(e.message)));  // # feature: consolidation
  $("erase-user").addEventListener("click", () => eraseUser().catch((e) => toast(e.message)));
  $("import-file").addEventListener("change", (e) => {
    if (e.target.files[0]) importMemories(e.target.files[0]);
    e.target.value = "";
  });
  setLive(false);
  refreshStatus();
  showFeatures().then(refresh).then(listen);
}

document.addEventListener("DOMContentLoaded", start);
