import 'reflect-metadata';
import { Module, type INestApplicationContext, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LogModule, LogReader, LogWriter, type LogModuleOptions } from '@ordinal/log';
import {
  AmqpConnection,
  AmqpModule,
  InputConsumer,
  PushInterfaces,
  type AmqpModuleOptions,
} from '@ordinal/amqp';
import { brokerUrl } from './amqp-broker.js';

/** Log lines a context printed, for tests that check what the server says. */
export class CapturedLogs implements LoggerService {
  readonly lines: { level: string; message: string }[] = [];
  log(message: unknown): void {
    this.add('log', message);
  }
  warn(message: unknown): void {
    this.add('warn', message);
  }
  error(message: unknown): void {
    this.add('error', message);
  }
  debug(): void {}
  verbose(): void {}
  /** Lines of `level` (any level when omitted) matching `pattern`. */
  matching(pattern: RegExp, level?: string): string[] {
    return this.lines
      .filter((l) => (!level || l.level === level) && pattern.test(l.message))
      .map((l) => l.message);
  }
  private add(level: string, message: unknown): void {
    this.lines.push({ level, message: String(message) });
    if (process.env.ORDINAL_TEST_LOGS) console.log(`[${level}] ${String(message)}`);
  }
}

/** The log and AMQP in a Nest application context (no HTTP) on the suite's database and the test broker. */
export interface AmqpContext {
  app: INestApplicationContext;
  logs: CapturedLogs;
  writer: LogWriter;
  reader: LogReader;
  input: InputConsumer;
  interfaces: PushInterfaces;
  connection: AmqpConnection;
  close(): Promise<void>;
}

export async function startAmqpContext(
  databaseUrl: string,
  amqp: Omit<AmqpModuleOptions, 'url'>,
  log: LogModuleOptions = {},
): Promise<AmqpContext> {
  @Module({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: databaseUrl,
        entities: [],
        synchronize: false,
        extra: { max: 6, application_name: 'ordinal' },
      }),
      LogModule.forRoot({ isGlobal: true, duplicateWindow: 0, livePollMs: 200, ...log }),
      AmqpModule.forRoot({ url: brokerUrl(), retryInitialMs: 100, retryMaxMs: 1000, ...amqp }),
    ],
  })
  class SuiteModule {}
  const logs = new CapturedLogs();
  const app = await NestFactory.createApplicationContext(SuiteModule, { logger: logs });
  await app.init();
  return {
    app,
    logs,
    writer: app.get(LogWriter),
    reader: app.get(LogReader),
    input: app.get(InputConsumer),
    interfaces: app.get(PushInterfaces),
    connection: app.get(AmqpConnection),
    close: () => app.close(),
  };
}
