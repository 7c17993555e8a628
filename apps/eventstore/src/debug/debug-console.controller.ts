import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/scopes.decorator.js';
import { PAGE_CONTENT_SECURITY_POLICY } from '../security/page-policy.js';
import { DEBUG_CONSOLE_PAGE } from './debug-console.page.js';
import { DEBUG_CONSOLE_SCRIPT } from './debug-console.script.js';

/**
 * The debug console: a static page and its script; the token is typed into it and sent by the
 * page's own requests, so the page itself needs none.
 */
@ApiExcludeController()
@Controller('debug')
export class DebugConsoleController {
  @Get('events')
  @Public()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('x-frame-options', 'DENY')
  @Header('content-security-policy', PAGE_CONTENT_SECURITY_POLICY)
  page(): string {
    return DEBUG_CONSOLE_PAGE;
  }

  @Get('events.js')
  @Public()
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('cache-control', 'no-cache')
  script(): string {
    return DEBUG_CONSOLE_SCRIPT;
  }
}
