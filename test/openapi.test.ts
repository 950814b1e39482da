// /openapi.json describes every route the server has, and nothing it does not have.
import { expect } from 'chai';
import { routers } from '../src/http/app.ts';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';

interface Layer {
  path: string;
  methods: string[];
  stack: Array<{ name: string }>;
}

type Document = {
  openapi: string;
  paths: Record<
    string,
    Record<string, { parameters: Array<{ name: string; in: string }>; responses: Record<string, { headers?: object }> }>
  >;
};

describe('OpenAPI document', () => {
  it('is served at /openapi.json and matches the routers route for route', async () => {
    const answer = await client(sharedServer().url).get('/openapi.json');
    expect(answer.status).to.equal(200);
    const document = JSON.parse(answer.text) as Document;
    expect(document.openapi).to.equal('3.1.0');

    const served = new Set<string>();
    for (const router of routers(sharedServer().deps)) {
      for (const layer of (router as unknown as { stack: Layer[] }).stack) {
        for (const method of layer.methods) {
          if (method === 'HEAD') continue; // Koa answers HEAD for every GET.
          served.add(`${method.toLowerCase()} ${layer.path.replace(/:(\w+)/g, '{$1}')}`);
        }
      }
    }
    const described = new Set(
      Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`)),
    );
    expect(served.size).to.be.greaterThan(40);
    expect(
      [...served].filter((r) => !described.has(r)),
      'routes missing from the document',
    ).to.deep.equal([]);
    expect(
      [...described].filter((r) => !served.has(r)),
      'documented routes the server lacks',
    ).to.deep.equal([]);
  });

  it('declares every path parameter', async () => {
    const document = JSON.parse((await client(sharedServer().url).get('/openapi.json')).text) as Document;
    for (const [path, item] of Object.entries(document.paths)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const [method, operation] of Object.entries(item)) {
        const declared = operation.parameters.filter((p) => p.in === 'path').map((p) => p.name);
        expect(declared, `${method} ${path}`).to.have.members(names);
      }
    }
  });

  it('describes 503 server_busy with Retry-After on exactly the routes admission control can refuse', async () => {
    const document = JSON.parse((await client(sharedServer().url).get('/openapi.json')).text) as Document;
    const admitted = new Set<string>();
    for (const router of routers(sharedServer().deps)) {
      for (const layer of (router as unknown as { stack: Layer[] }).stack) {
        // limitWrites() (http/middleware/rate-limit.ts) takes the admission.
        if (!layer.stack.some((middleware) => middleware.name === 'admittedWrite')) continue;
        for (const method of layer.methods) admitted.add(`${method.toLowerCase()} ${layer.path.replace(/:(\w+)/g, '{$1}')}`);
      }
    }
    const busy = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) => (operation.responses['503'] ? [`${method} ${path}`] : [])),
    );
    expect(admitted.size).to.be.greaterThan(7);
    expect(busy).to.have.members([...admitted]);
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (operation.responses['503']) expect(operation.responses['503'].headers, `${method} ${path}`).to.have.property('Retry-After');
      }
    }
  });
});
