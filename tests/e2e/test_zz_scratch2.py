import asyncio
from tests.fakes.anthropic_api import text
async def test_hang(fake_api, start_pneuma, connect, tmp_path):
    fake_api.push(text("slow " * 300, chunk=5), delay=0.05)
    run = await start_pneuma()
    client = await connect(run)
    await client.wait_for(lambda m: m["type"] == "stream_event", timeout=15)
    run.cli_argvs()
    (tmp_path / "pids").write_text(repr(sorted(run.seen)))
    await asyncio.sleep(60)
