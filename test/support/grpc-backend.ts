/**
 * A real grpc-js server and client for gRPC tests and benchmarks, on a hand-built service
 * definition (`echo.Echo`, JSON messages: no .proto file to load). The server records the
 * metadata of each call it gets.
 */
import * as grpc from '@grpc/grpc-js';

export interface EchoRequest {
  readonly text: string;
}
export interface EchoReply {
  readonly text: string;
}

const serialize = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const deserialize = (bytes: Buffer): unknown => JSON.parse(bytes.toString('utf8')) as unknown;

function method(name: string, requestStream: boolean, responseStream: boolean, service = 'echo.Echo') {
  return {
    path: `/${service}/${name}`,
    requestStream,
    responseStream,
    requestSerialize: serialize,
    requestDeserialize: deserialize,
    responseSerialize: serialize,
    responseDeserialize: deserialize,
    originalName: name,
  };
}

/**
 * The service: Unary, ServerStream (one reply per word), ClientStream (words joined), Bidi (echo
 * each); `service` names it in the call paths (a client may call the same methods under another name).
 */
export function echoService(service = 'echo.Echo') {
  return {
    Unary: method('Unary', false, false, service),
    ServerStream: method('ServerStream', false, true, service),
    ClientStream: method('ClientStream', true, false, service),
    Bidi: method('Bidi', true, true, service),
  } as const;
}

const ECHO_SERVICE = echoService();

/** A client of the echo methods at `address`, called under the name `service` (`/service/Unary`...). */
export function echoClient(
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  service = 'echo.Echo',
  options: grpc.ClientOptions = {},
): EchoStub {
  const Client = grpc.makeGenericClientConstructor(echoService(service) as unknown as grpc.ServiceDefinition, service);
  return new Client(address, credentials, options) as unknown as EchoStub;
}

type Callback = (err: grpc.ServiceError | null, reply?: EchoReply) => void;
export interface EchoStub extends grpc.Client {
  Unary(req: EchoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, cb: Callback): grpc.ClientUnaryCall;
  ServerStream(
    req: EchoRequest,
    metadata?: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<EchoReply>;
  ClientStream(
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    cb: Callback,
  ): grpc.ClientWritableStream<EchoRequest>;
  Bidi(metadata?: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<EchoRequest, EchoReply>;
}

export interface GrpcBackend {
  /** `127.0.0.1:PORT` */
  readonly host: string;
  /** The metadata of every call received, in order. */
  readonly seen: { readonly path: string; readonly metadata: Record<string, unknown> }[];
  /** Calls cancelled by their client (or by the gateway on its behalf). */
  readonly cancelled: string[];
  close(): Promise<void>;
}

/**
 * The echo server. A Unary request's text picks its behaviour: `not-found` answers NOT_FOUND with
 * a message and trailing metadata, `hang` never answers; anything else is echoed with the
 * client's `x-tag` as initial metadata and `x-trailer: done` as trailing metadata.
 */
export async function startGrpcBackend(
  credentials: grpc.ServerCredentials = grpc.ServerCredentials.createInsecure(),
): Promise<GrpcBackend> {
  const server = new grpc.Server();
  const seen: GrpcBackend['seen'][number][] = [];
  const cancelled: string[] = [];
  const record = (path: string, call: { metadata: grpc.Metadata; on(e: 'cancelled', f: () => void): unknown }) => {
    seen.push({ path, metadata: call.metadata.getMap() });
    call.on('cancelled', () => cancelled.push(path));
  };
  const trailer = () => {
    const m = new grpc.Metadata();
    m.set('x-trailer', 'done');
    return m;
  };
  const tagOf = (m: grpc.Metadata) => {
    const out = new grpc.Metadata();
    const tag = m.get('x-tag')[0];
    if (tag !== undefined) out.set('x-tag', String(tag));
    return out;
  };
  server.addService(ECHO_SERVICE as unknown as grpc.ServiceDefinition, {
    Unary: (call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, cb: grpc.sendUnaryData<EchoReply>) => {
      record('Unary', call);
      const text = call.request.text;
      if (text === 'hang') return;
      if (text === 'not-found') {
        const metadata = new grpc.Metadata();
        metadata.set('x-reason', 'no such thing');
        return cb({ code: grpc.status.NOT_FOUND, details: 'thing 42 not found', metadata });
      }
      call.sendMetadata(tagOf(call.metadata));
      cb(null, { text }, trailer());
    },
    ServerStream: (call: grpc.ServerWritableStream<EchoRequest, EchoReply>) => {
      record('ServerStream', call);
      for (const word of call.request.text.split(' ')) call.write({ text: word });
      call.end(trailer());
    },
    ClientStream: (call: grpc.ServerReadableStream<EchoRequest, EchoReply>, cb: grpc.sendUnaryData<EchoReply>) => {
      record('ClientStream', call);
      const words: string[] = [];
      call.on('data', (m: EchoRequest) => words.push(m.text));
      call.on('end', () => cb(null, { text: words.join(' ') }, trailer()));
    },
    Bidi: (call: grpc.ServerDuplexStream<EchoRequest, EchoReply>) => {
      record('Bidi', call);
      call.on('data', (m: EchoRequest) => call.write({ text: `echo ${m.text}` }));
      call.on('end', () => call.end(trailer()));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    host: `127.0.0.1:${port}`,
    seen,
    cancelled,
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

/** A Unary call as a promise: the reply with its metadata, or the ServiceError (settled on its status). */
export function unary(
  client: EchoStub,
  text: string,
  metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<{ reply: EchoReply; metadata: grpc.Metadata; trailers: grpc.Metadata }> {
  return new Promise((resolve, reject) => {
    let head = new grpc.Metadata();
    let outcome: { err: grpc.ServiceError | null; reply?: EchoReply | undefined } | undefined;
    // grpc-js calls back before it emits 'status' (which carries the trailers).
    const call = client.Unary({ text }, metadata, options, (err, reply) => (outcome = { err, reply }));
    call.on('metadata', (m: grpc.Metadata) => (head = m));
    call.on('status', (s: grpc.StatusObject) => {
      if (outcome?.err) reject(outcome.err);
      else resolve({ reply: outcome!.reply!, metadata: head, trailers: s.metadata });
    });
  });
}
