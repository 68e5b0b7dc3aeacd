// The read-only conversation search: text only (textContent), never markup from the archive.
"use strict";

const params = new URLSearchParams(location.search);
const TEXT = {
  en: { title: "Conversations", memories: "Memories", search: "Search your conversations…",
        since: "since", until: "until", find: "Search", none: "No archived message matches.",
        hint: "Read-only: every message of your conversations, as the archive keeps it.",
        thread: "thread", digest: "digest of", messages: "messages",
        role_user: "you", role_assistant: "assistant", role_tool: "tool result" },
  zh: { title: "对话记录", memories: "记忆", search: "搜索你的对话…", since: "从", until: "到",
        find: "搜索", none: "没有匹配的对话消息。", hint: "只读：归档中保存的你的每一条对话消息。",
        thread: "对话", digest: "摘要", messages: "条消息",
        role_user: "你", role_assistant: "助手", role_tool: "工具结果" },
};
let lang = params.get("lang") || localStorage.getItem("gulfstream-lang") ||
  ((navigator.language || "en").startsWith("zh") ? "zh" : "en");

const $ = (id) => document.getElementById(id);
const t = (key) => (TEXT[lang] || TEXT.en)[key] || key;

function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function headers() {
  const result = { Accept: "application/json" };
  const token = sessionStorage.getItem("gulfstream-token");
  if (token) result.Authorization = "Bearer " + token;
  if (params.get("user")) result["X-Gulfstream-User"] = params.get("user");
  return result;
}

function applyLanguage() {
  document.documentElement.lang = lang;
  document.querySelectorAll("[data-i18n]").forEach((n) => { n.textContent = t(n.dataset.i18n); });
  document.querySelectorAll("[data-i18n-placeholder]").forEach((n) => { n.placeholder = t(n.dataset.i18nPlaceholder); });
  $("lang").textContent = lang === "zh" ? "English" : "中文";
}

function show(data) {
  const results = $("results");
  results.replaceChildren();
  (data.notes || []).forEach((note) => results.append(el("p", "hint", note)));
  if (!data.hits.length) { results.append(el("p", "hint empty", t("none"))); return; }
  for (const hit of data.hits) {
    if (hit.digest) {
      results.append(el("section", "hit digest",
        el("h3", "", `${t("digest")} ${hit.digest.day} (${hit.digest.messages} ${t("messages")})`),
        el("p", "digest-text", hit.digest.text)));
      continue;
    }
    const list = el("ol", "messages");
    for (const m of hit.messages) {
      list.append(el("li", "message " + m.role + (m.match ? " match" : ""),
        el("span", "when", m.time + " "), el("strong", "", t("role_" + m.role) + ": "), m.content));
    }
    results.append(el("section", "hit", el("h3", "", `${t("thread")} ${hit.thread_id}`), list));
  }
}

async function search(event) {
  if (event) event.preventDefault();
  const query = new URLSearchParams({ q: $("q").value.trim(), since: $("since").value, until: $("until").value });
  const response = await fetch("../api/conversations?" + query, { headers: headers(), credentials: "same-origin" });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    $("results").replaceChildren(el("p", "error", data.error || response.statusText));
    return;
  }
  show(data);
}

function start() {
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("token")) {  // like the editor: a token in the fragment, kept per tab
    sessionStorage.setItem("gulfstream-token", hash.get("token"));
    history.replaceState(null, "", location.pathname + location.search);
  }
  $("to-memories").href = "../" + location.search;
  applyLanguage();
  $("lang").addEventListener("click", () => {
    lang = lang === "zh" ? "en" : "zh";
    localStorage.setItem("gulfstream-lang", lang);
    applyLanguage();
  });
  $("search-form").addEventListener("submit", (e) => search(e).catch((err) => show({ hits: [], notes: [err.message] })));
}

document.addEventListener("DOMContentLoaded", start);
