"""``tether mcp serve``: expose a governed agent as an MCP tool (see tether.mcp.serve)."""

from __future__ import annotations

import typer

from tether.ops.sessions import _fail

app = typer.Typer(
    help="Model Context Protocol: serve an agent as an MCP tool.", no_args_is_help=True
)


@app.command()
def serve(
    app_spec: str = typer.Option(
        ...,
        "--app",
        help="module:factory; factory(session_id=...) returns the Agent or a workflow.",
    ),
    name: str = typer.Option("tether", "--name", help="The server name the MCP host sees."),
    tool_name: str = typer.Option("run_agent", "--tool", help="The tool's name."),
) -> None:
    """Serve the agent over stdio as one MCP tool (prompt, session_id); its questions for a
    person (Confirm, in-doubt calls) go to the MCP host as elicitations. Needs the mcp
    extra: pip install -e '.[mcp]'. Stdout is the protocol; a stderr whose reader went away
    is ignored."""
    from tether.ops.safe_io import protect_stdio

    protect_stdio(stdout=False)
    from tether.errors import ConfigurationError
    from tether.ops.app_loader import load_factory

    try:
        load_factory(app_spec)  # a bad --app fails here, before the protocol starts
        from tether.mcp.serve import serve_stdio
    except ConfigurationError as exc:
        _fail(str(exc))
    except ImportError as exc:
        _fail(f"tether mcp serve needs the mcp extra: pip install -e '.[mcp]' ({exc})")
    serve_stdio(app_spec, name=name, tool_name=tool_name)
