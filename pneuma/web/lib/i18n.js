// The shell's own words in the person's language (English, Simplified Chinese).
//
// Catalogues are JSON files under /static/i18n/ (pneuma/web/i18n/), one per
// locale, with the same keys; tests/test_i18n_catalogues.py checks that every
// key the shell passes to `t` exists in both, with the same {placeholders}.
// A value is a string, or {one, other, …} for counts (Intl.PluralRules picks
// the form; Chinese has only "other").
//
// The locale comes from the person's saved choice (lib/preferences.js: one
// file for the person, so the launcher and every workspace's port share
// it), else from navigator.languages: any zh* → zh-CN, anything else → en.
// English is also the fallback for a key the other catalogue lacks, so a
// gap shows English, never a raw key.

import { loadPreferences, preference, setPreference } from './preferences.js';

export const LOCALES = ['en', 'zh-CN'];
export const LOCALE_NAMES = { en: 'English', 'zh-CN': '中文' };
const LEGACY_KEY = 'pneuma.locale'; // this origin's choice from before the preferences file

const catalogues = new Map(); // locale -> {key: value}
const listeners = new Set();
let current = 'en';

/** The locale the browser asks for, mapped onto ours. */
export function browserLocale(languages = navigator.languages || [navigator.language]) {
  for (const lang of languages) {
    if (!lang) continue;
    if (/^zh\b/i.test(lang)) return 'zh-CN';
    // The first language the person listed decides; English is the default.
    return 'en';
  }
  return 'en';
}

function savedLocale() {
  const chosen = preference('locale');
  if (LOCALES.includes(chosen)) return chosen;
  try {
    const legacy = localStorage.getItem(LEGACY_KEY);
    return LOCALES.includes(legacy) ? legacy : null;
  } catch {
    return null; // storage blocked: fall back to the browser's language
  }
}

async function fetchCatalogue(locale) {
  if (catalogues.has(locale)) return catalogues.get(locale);
  const response = await fetch(`/static/i18n/${locale}.json`, { cache: 'no-cache' });
  if (!response.ok) throw new Error(`the ${locale} texts answered ${response.status}`);
  const catalogue = await response.json();
  catalogues.set(locale, catalogue);
  return catalogue;
}

/**
 * Load the texts for the saved or browser locale (and English, the fallback).
 * Resolves to the locale in use; never throws (without catalogues, `t`
 * returns the key and `ready()` is false).
 */
export async function initI18n() {
  await loadPreferences(); // never rejects
  const wanted = savedLocale() || browserLocale();
  try {
    await fetchCatalogue('en');
    if (wanted !== 'en') await fetchCatalogue(wanted);
    current = wanted;
  } catch (error) {
    console.warn('pneuma: could not load the interface texts', error);
    current = catalogues.has(wanted) ? wanted : 'en';
  }
  document.documentElement.lang = current;
  return current;
}

/** Whether the English catalogue (the fallback) is loaded. */
export function ready() {
  return catalogues.has('en');
}

export function getLocale() {
  return current;
}

/** Switch the language at runtime; the choice is kept for the person
 *  (every workspace and the launcher, lib/preferences.js). */
export async function setLocale(locale) {
  if (!LOCALES.includes(locale)) throw new Error(`unknown locale ${locale}`);
  await fetchCatalogue(locale);
  if (preference('locale') !== locale) setPreference('locale', locale);
  if (locale === current) return;
  current = locale;
  document.documentElement.lang = locale;
  for (const listener of [...listeners]) {
    try {
      listener(locale);
    } catch (error) {
      console.error('pneuma: a locale listener failed', error);
    }
  }
}

/** Call `listener(locale)` after each switch; returns the unsubscribe function. */
export function onLocaleChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * A manifest's localized text (a string, or {locale: text}) in `locale`
 * (default: the page's): the exact locale, then the same language
 * (zh → zh-CN), then English, then the first entry — as `localize` does in
 * Python (pneuma/host/manifest.py).
 */
export function localized(text, locale = current) {
  if (text == null) return '';
  if (typeof text !== 'object') return String(text);
  if (text[locale]) return text[locale];
  const language = String(locale).split('-')[0];
  const sameLanguage = Object.keys(text).find((key) => key.split('-')[0] === language && text[key]);
  if (sameLanguage) return text[sameLanguage];
  if (text.en) return text.en;
  return Object.values(text).find(Boolean) || '';
}

function lookup(locale, key) {
  const catalogue = catalogues.get(locale);
  return catalogue ? catalogue[key] : undefined;
}

/**
 * The text for `key` in the current locale, with `{name}` replaced from
 * `params`. A plural entry uses `params.count` to pick its form.
 */
export function t(key, params = {}) {
  let value = lookup(current, key);
  if (value === undefined) value = lookup('en', key);
  if (value === undefined) return key;
  if (typeof value === 'object' && value !== null) {
    const form = new Intl.PluralRules(current).select(Number(params.count) || 0);
    value = value[form] !== undefined ? value[form] : value.other;
  }
  return String(value).replace(/\{(\w+)\}/g, (whole, name) => (
    Object.prototype.hasOwnProperty.call(params, name) ? formatParam(params[name]) : whole));
}

function formatParam(value) {
  return typeof value === 'number' ? formatNumber(value) : String(value);
}

export function formatNumber(value, options = {}) {
  return new Intl.NumberFormat(current, options).format(value);
}

/** A duration in ms as the locale writes it ("1.5 s", "1.5秒", "2 min 5 s"). */
export function formatDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return null;
  const unit = (value, name, digits = 0) => new Intl.NumberFormat(current, {
    style: 'unit', unit: name, unitDisplay: 'short', maximumFractionDigits: digits,
  }).format(value);
  if (ms < 1000) return unit(ms, 'millisecond');
  const s = ms / 1000;
  if (s < 60) return unit(s, 'second', 1);
  return `${unit(Math.floor(s / 60), 'minute')} ${unit(Math.round(s % 60), 'second')}`;
}

/** A US-dollar cost, with more digits for fractions of a cent. */
export function formatCost(usd) {
  if (typeof usd !== 'number') return null;
  const digits = usd !== 0 && usd < 0.01 ? 4 : usd === 0 ? 0 : 2;
  return new Intl.NumberFormat(current, {
    style: 'currency', currency: 'USD', minimumFractionDigits: digits, maximumFractionDigits: digits,
  }).format(usd);
}
