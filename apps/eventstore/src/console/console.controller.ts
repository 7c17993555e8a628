import { Controller, Get, Header, Redirect } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/scopes.decorator.js';
import { PAGE_CONTENT_SECURITY_POLICY } from '../security/page-policy.js';
import { CONSOLE_PAGE } from './console.page.js';
import { CONSOLE_SCRIPT } from './console.script.js';
import { DASHBOARD_SCRIPT } from './dashboard.script.js';
import { STORAGE_SCRIPT } from './storage.script.js';

/**
 * The console (docs/console.md): a static page and its script; the data comes from the API
 * with the token typed into the page, or given in the address's fragment (`#token=…`, which
 * the browser never sends). The page itself carries no token: anyone who can reach the port
 * can fetch it.
 */
@ApiExcludeController()
@Controller()
export class ConsoleController {
  @Get()
  @Public()
  @Redirect('/console', 302)
  root(): void {}

  @Get('console')
  @Public()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('x-frame-options', 'DENY')
  @Header('content-security-policy', PAGE_CONTENT_SECURITY_POLICY)
  html(): string {
    return CONSOLE_PAGE;
  }

  @Get('console/console.js')
  @Public()
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('cache-control', 'no-cache')
  script(): string {
    return CONSOLE_SCRIPT;
  }

  @Get('console/dashboard.js')
  @Public()
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('cache-control', 'no-cache')
  dashboard(): string {
    return DASHBOARD_SCRIPT;
  }

  @Get('console/storage.js')
  @Public()
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('cache-control', 'no-cache')
  storage(): string {
    return STORAGE_SCRIPT;
  }
}
