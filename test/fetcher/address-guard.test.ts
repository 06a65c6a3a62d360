/**
 * The address guard on its own: which addresses are refused, what the refusal says, that a
 * name is refused when ANY of its addresses is, and that the guard's socket lookup serves only
 * approved addresses. Resolution goes through table lookups: no DNS traffic.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AddressGuard,
  classifyAddress,
  isAllowedAddress,
  resolveAllowedAddress,
  resolveAllowedAddresses,
  type AddressKind,
} from '../../src/fetcher/address-guard.js';
import { FetchError } from '../../src/fetcher/types.js';
import { fetchError, tableLookup } from './helpers/fetcher.js';

const CASES: Array<[string, AddressKind]> = [
  ['8.8.8.8', 'public'],
  ['93.184.215.14', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['127.0.0.1', 'loopback'],
  ['127.255.0.7', 'loopback'],
  ['::1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.5.4', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.1.1', 'link-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456::1', 'unique-local'],
  ['fec0::1', 'private'],
  ['100.64.0.1', 'shared'],
  ['100.127.255.254', 'shared'],
  ['224.0.0.1', 'multicast'],
  ['ff02::1', 'multicast'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['192.0.2.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['::a00:1', 'reserved'],
  ['169.254.169.254', 'metadata'],
  ['169.254.170.2', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['168.63.129.16', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['2001::1', 'tunnel'],
  ['not-an-ip', 'invalid'],
];

describe('classifyAddress', () => {
  for (const [ip, kind] of CASES) {
    test(`${ip} is ${kind}`, () => assert.equal(classifyAddress(ip).kind, kind));
  }

  test('addresses carrying an IPv4 address are judged by it', () => {
    assert.deepEqual(classifyAddress('::ffff:10.0.0.1'), { kind: 'private', embedded: '10.0.0.1' });
    assert.deepEqual(classifyAddress('::ffff:169.254.169.254'), { kind: 'metadata', embedded: '169.254.169.254' });
    assert.deepEqual(classifyAddress('::ffff:8.8.8.8'), { kind: 'public', embedded: '8.8.8.8' });
    assert.deepEqual(classifyAddress('64:ff9b::a00:1'), { kind: 'private', embedded: '10.0.0.1' }); // NAT64
    assert.deepEqual(classifyAddress('2002:a9fe:a9fe::1'), { kind: 'metadata', embedded: '169.254.169.254' }); // 6to4
    assert.equal(classifyAddress('64:ff9b:1::1').kind, 'private'); // local-use NAT64
  });

  test('loopback reached through an IPv4-mapped address is refused even when loopback is allowed', () => {
    assert.equal(classifyAddress('::ffff:127.0.0.1').kind, 'reserved');
    assert.equal(isAllowedAddress('::ffff:127.0.0.1', { allowLoopback: true }), false);
    assert.equal(isAllowedAddress('127.0.0.1', { allowLoopback: true }), true);
    assert.equal(isAllowedAddress('::1', { allowLoopback: true }), true);
  });

  test('allowLoopback opens loopback and nothing else', () => {
    for (const [ip, kind] of CASES) {
      const allowed = isAllowedAddress(ip, { allowLoopback: true });
      assert.equal(allowed, kind === 'public' || kind === 'loopback', ip);
      assert.equal(isAllowedAddress(ip, { allowLoopback: false }), kind === 'public', ip);
    }
  });
});

describe('literal IPs in URLs', () => {
  // The WHATWG URL parser normalises every IPv4 spelling to dotted decimal, so the guard only
  // ever sees the canonical form; these show the forms attackers use all end up refused.
  const forms = [
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0x7f.0.0.1/',
    'http://0177.0.0.1/',
    'http://017700000001/',
    'http://127.1/',
    'http://127.0.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/',
    'http://[::1]/',
    'http://[0::1]/',
    'http://0/',
  ];
  for (const raw of forms) {
    test(`${raw} is refused without allowLoopback`, async () => {
      const host = new URL(raw).hostname;
      const err = await fetchError(resolveAllowedAddresses(host, { allowLoopback: false, lookup: tableLookup({}) }));
      assert.equal(err.code, 'blocked_address');
    });
  }

  test('metadata in decimal and hex spellings', async () => {
    for (const raw of [
      'http://2852039166/',
      'http://0xa9fea9fe/',
      'http://0251.0376.0251.0376/',
      'http://[::ffff:a9fe:a9fe]/',
    ]) {
      const err = await fetchError(resolveAllowedAddresses(new URL(raw).hostname, { allowLoopback: true }));
      assert.equal(err.code, 'blocked_address', raw);
      assert.match(err.message, /metadata/, raw);
    }
  });
});

describe('resolveAllowedAddresses', () => {
  const lookup = tableLookup({
    'shop.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'internal.test': ['10.0.0.1'],
    'mixed.test': ['93.184.215.14', '10.0.0.1'],
    'loop.test': ['127.0.0.1', '::1'],
    'meta.test': ['169.254.169.254'],
    'empty.test': [],
  });

  test('returns every address of a public name, the first as the preferred one', async () => {
    const all = await resolveAllowedAddresses('shop.test', { allowLoopback: false, lookup });
    assert.deepEqual(
      all.map((a) => a.address),
      ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    );
    assert.deepEqual(await resolveAllowedAddress('shop.test', { allowLoopback: false, lookup }), {
      address: '93.184.215.14',
      family: 4,
    });
  });

  test('a name with one private address among public ones is refused', async () => {
    const err = await fetchError(resolveAllowedAddresses('mixed.test', { allowLoopback: true, lookup }));
    assert.equal(err.code, 'blocked_address');
    assert.equal(err.message.startsWith('mixed.test resolves to a private network address;'), true, err.message);
  });

  test('messages name the host and the rule broken; a literal address, what it is; never what a name resolved to', async () => {
    const e1 = await fetchError(resolveAllowedAddresses('internal.test', { allowLoopback: true, lookup }));
    assert.equal(
      e1.message,
      'internal.test resolves to a private network address; pricehound does not fetch private, loopback, link-local or cloud metadata addresses',
    );
    const e2 = await fetchError(resolveAllowedAddresses('meta.test', { allowLoopback: true, lookup }));
    assert.match(e2.message, /^meta\.test resolves to a cloud metadata address;/);
    assert.doesNotMatch(e2.message, /169\.254/);
    const e3 = await fetchError(resolveAllowedAddresses('loop.test', { allowLoopback: false, lookup }));
    assert.match(e3.message, /^loop\.test resolves to a loopback address;.*ALLOW_LOOPBACK_TARGETS=true/);
    assert.doesNotMatch(e3.message, /127\.0\.0\.1|::1/);
    const e4 = await fetchError(resolveAllowedAddresses('[::1]', { allowLoopback: false, lookup }));
    assert.match(e4.message, /^::1 is a loopback address/);
  });

  test('loopback names pass only with allowLoopback', async () => {
    assert.equal((await resolveAllowedAddresses('loop.test', { allowLoopback: true, lookup })).length, 2);
    assert.equal(
      (await fetchError(resolveAllowedAddresses('loop.test', { allowLoopback: false, lookup }))).code,
      'blocked_address',
    );
  });

  test('a real name resolving to 127.0.0.1 (localhost, from /etc/hosts) is refused without allowLoopback', async () => {
    const err = await fetchError(resolveAllowedAddresses('localhost', { allowLoopback: false }));
    assert.equal(err.code, 'blocked_address');
    assert.match(err.message, /^localhost resolves to a loopback address;/);
  });

  test('unknown names and names without addresses fail with dns_failed', async () => {
    const e1 = await fetchError(resolveAllowedAddresses('nowhere.test', { allowLoopback: false, lookup }));
    assert.equal(e1.code, 'dns_failed');
    assert.equal(e1.message, 'nowhere.test does not resolve (no such host)');
    assert.equal(
      (await fetchError(resolveAllowedAddresses('empty.test', { allowLoopback: false, lookup }))).code,
      'dns_failed',
    );
  });

  test('a trailing dot is the plain name; localhost names are loopback without a lookup; empty labels are invalid', async () => {
    const calls = tableLookup({ 'internal.test': ['10.0.0.1'], 'shop.test': ['93.184.215.14'] });
    const e1 = await fetchError(resolveAllowedAddresses('internal.test.', { allowLoopback: false, lookup: calls }));
    assert.match(e1.message, /^internal\.test resolves to a private network address/);
    assert.deepEqual(
      (await resolveAllowedAddresses('SHOP.test.', { allowLoopback: false, lookup: calls })).map((a) => a.address),
      ['93.184.215.14'],
    );
    assert.deepEqual([...calls.calls.keys()].sort(), ['internal.test', 'shop.test']);
    for (const host of ['localhost', 'localhost.', 'LocalHost', 'api.localhost', 'api.localhost.']) {
      const err = await fetchError(resolveAllowedAddresses(host, { allowLoopback: false, lookup: calls }));
      assert.equal(err.code, 'blocked_address', host);
      assert.match(err.message, /resolves to a loopback address/);
    }
    for (const host of ['a..b', 'localhost..', '.', '..', '.localhost']) {
      assert.equal(
        (await fetchError(resolveAllowedAddresses(host, { allowLoopback: true, lookup: calls }))).code,
        'invalid_url',
        host,
      );
    }
    assert.deepEqual([...calls.calls.keys()].sort(), ['internal.test', 'shop.test'], 'no other lookup');
    // The guard caches the plain name: `shop.test.` and `shop.test` are one entry.
    const guard = new AddressGuard({ allowLoopback: false, lookup: calls });
    await guard.resolve('shop.test.');
    await guard.resolve('shop.test');
    assert.equal(calls.calls.get('shop.test'), 2);
  });

  test('allowTargets open one literal loopback address:port and nothing else', async () => {
    const policy = {
      allowLoopback: false,
      allowTargets: ['127.0.0.1:4791', '[::1]:4791', '10.0.0.1:80'],
      lookup: tableLookup({ 'loop.test': ['127.0.0.1'] }),
    };
    assert.equal((await resolveAllowedAddresses('127.0.0.1', policy, 4791)).length, 1);
    assert.equal((await resolveAllowedAddresses('[::1]', policy, 4791)).length, 1);
    const refused: [string, number | undefined][] = [
      ['127.0.0.1', 4792],
      ['127.0.0.1', undefined],
      ['127.0.0.2', 4791],
      ['loop.test', 4791],
      ['localhost', 4791],
      ['10.0.0.1', 80], // listed, but not loopback: nothing outside loopback can be opened
      ['[::ffff:127.0.0.1]', 4791],
    ];
    for (const [host, port] of refused) {
      assert.equal(
        (await fetchError(resolveAllowedAddresses(host, policy, port))).code,
        'blocked_address',
        `${host}:${String(port)}`,
      );
    }
    const guard = new AddressGuard(policy);
    assert.equal((await guard.resolve('127.0.0.1', 4791)).length, 1);
    assert.equal((await fetchError(guard.resolve('127.0.0.1', 22))).code, 'blocked_address');
  });

  test('an empty host is an invalid URL', async () => {
    assert.equal((await fetchError(resolveAllowedAddresses('', { allowLoopback: true, lookup }))).code, 'invalid_url');
  });
});

describe('AddressGuard', () => {
  test('caches approved resolutions and asks DNS once for a burst', async () => {
    const lookup = tableLookup({ 'shop.test': ['93.184.215.14'] });
    let now = 1_000;
    const guard = new AddressGuard({ allowLoopback: false, lookup, cacheTtlMs: 30_000, now: () => now });
    await Promise.all([guard.resolve('shop.test'), guard.resolve('SHOP.test'), guard.resolve('shop.test')]);
    assert.equal(lookup.calls.get('shop.test'), 1);
    now += 29_000;
    await guard.resolve('shop.test');
    assert.equal(lookup.calls.get('shop.test'), 1);
    now += 2_000;
    await guard.resolve('shop.test');
    assert.equal(lookup.calls.get('shop.test'), 2);
  });

  test('does not cache refusals or failures: a name that turns private is refused, one that heals passes', async () => {
    let answer = ['10.0.0.1'];
    const lookup = tableLookup({ 'flip.test': () => answer });
    const guard = new AddressGuard({ allowLoopback: false, lookup });
    assert.equal((await fetchError(guard.resolve('flip.test'))).code, 'blocked_address');
    answer = ['93.184.215.14'];
    assert.deepEqual(
      (await guard.resolve('flip.test')).map((a) => a.address),
      ['93.184.215.14'],
    );
  });

  test('its socket lookup serves approved addresses only, in the shape net.connect asks for', async () => {
    const lookup = tableLookup({
      'shop.test': ['93.184.215.14', '2606:4700:4700::1111'],
      'bad.test': ['192.168.0.10'],
    });
    const guard = new AddressGuard({ allowLoopback: false, lookup });
    const call = (host: string, options: object): Promise<unknown[]> =>
      new Promise((resolve) => guard.lookup(host, options, (err, address, family) => resolve([err, address, family])));
    assert.deepEqual(await call('shop.test', {}), [null, '93.184.215.14', 4]);
    assert.deepEqual(await call('shop.test', { family: 6 }), [null, '2606:4700:4700::1111', 6]);
    assert.deepEqual(await call('shop.test', { all: true }), [
      null,
      [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:4700:4700::1111', family: 6 },
      ],
      undefined,
    ]);
    const [err] = await call('bad.test', { all: true });
    assert.ok(err instanceof FetchError);
    assert.equal(err.code, 'blocked_address');
  });
});
