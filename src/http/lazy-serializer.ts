import SerializerSelector from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled the first time its
 * route answers with that status instead of all of them when the app starts. Compiling every
 * route's schemas took most of the 4 CPU-seconds of `buildApp` + `ready` (docs/BENCHMARKS.md,
 * "The test suite's CPU"), paid by every process that starts, test files and CLI included, for
 * routes most of them never call. The serializer made is the one Fastify would have made.
 */
export function lazySerializerFactory(): SerializerSelector.SerializerFactory {
  const factory = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = factory(externalSchemas, options);
    return (route) => {
      let serialize: SerializerSelector.Serializer | undefined;
      return (doc) => (serialize ??= compile(route))(doc);
    };
  };
}
