import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';
import { localized, t, initI18n, setLocale, getLocale, browserLocale } from '../../pneuma/web/lib/i18n.js';

test('a manifest text falls back exact → same language → English → first', () => {
  assert.equal(localized({ en: 'Slides', 'zh-CN': '幻灯片' }, 'zh-CN'), '幻灯片');
  assert.equal(localized({ en: 'Slides', zh: '幻灯片' }, 'zh-CN'), '幻灯片');
  assert.equal(localized({ en: 'Slides', fr: 'Diapos' }, 'zh-CN'), 'Slides');
  assert.equal(localized({ fr: 'Diapos', de: 'Folien' }, 'zh-CN'), 'Diapos');
  assert.equal(localized('plain', 'zh-CN'), 'plain');
  assert.equal(localized(null), '');
});

test('the browser language picks the locale: any zh is Chinese, the first listed decides', () => {
  assert.equal(browserLocale(['zh-TW', 'en']), 'zh-CN');
  assert.equal(browserLocale(['de-DE', 'zh-CN']), 'en');
  assert.equal(browserLocale([]), 'en');
});

test('a key missing in Chinese shows English, never the raw key; placeholders are filled', async () => {
  await initI18n();
  const english = t('rewind.panelTitle');
  assert.notEqual(english, 'rewind.panelTitle');
  await setLocale('zh-CN');
  assert.equal(getLocale(), 'zh-CN');
  assert.notEqual(t('rewind.panelTitle'), english, 'the Chinese catalogue has its own text');
  assert.equal(t('no.such.key'), 'no.such.key');
  const failed = t('rewind.diffFailed', { message: 'E_IO' });
  assert.match(failed, /E_IO/);
  await setLocale('en');
});
