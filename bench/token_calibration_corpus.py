"""The fixed corpus of bench/token_calibration.py: prose, code, JSON and CJK, nothing
downloaded.

- prose: sections of the Python language reference that ship with every CPython
  (`pydoc_data.topics`), hard line breaks joined, examples left out;
- code: standard-library modules as they ship (`textwrap`, `heapq`, `json.decoder`);
- JSON: a tool result of issue records made from a fixed seed, minified and indented;
- CJK: the same technical paragraphs written here in Chinese, Japanese and Korean.

Each sample is measured alone and inside a message (its compact JSON, as the context
counts it).
"""

from __future__ import annotations

import inspect
import json
import random
from dataclasses import dataclass

PROSE_TOPICS = ("execmodel", "exceptions", "naming")
CODE_MODULES = ("textwrap", "heapq", "json.decoder")

ZH = (
    "我们的服务在后台为智能体准备上下文。每当用户上传文件时，接口会先把文件写入临时目录，"
    "计算它的哈希值，然后把任务交给后台的工作进程。工作进程读取文件，识别它的格式，"
    "把文档转换成纯文本，并按照配置截断过长的部分。处理完成以后，状态会变成“就绪”，"
    "等待中的请求会立即得到通知。如果处理失败，系统会记录原因，并在三次尝试之后把文件标记为失败，"
    "这样用户就知道应该重新上传或者换一种格式。\n\n"
    "对话的历史记录保存在数据库里，每条消息都带有它的令牌数。当历史变得太长、超过模型的上下文窗口时，"
    "系统会按照预算保留最新的消息，并把较早的部分压缩成一段摘要。摘要中的每一项都会注明它来自哪些原始消息，"
    "方便用户核对。置顶的消息永远不会被删除，工具调用和它的结果也总是一起保留或者一起移除。\n\n"
    "为了让提供商的提示缓存持续命中，裁剪点在多个请求之间保持不变，直到预算再次被超过。"
    "这意味着每一轮对话的前缀几乎完全相同，成本和延迟都会明显下降。我们在基准测试中测量了一百轮连续对话，"
    "超过八成的轮次保留了上一轮的前缀。"
)
JA = (
    "このサービスは、エージェントが使うコンテキストをバックグラウンドで準備します。"
    "ユーザーがファイルをアップロードすると、APIはまず一時ディレクトリに書き込み、"
    "ハッシュを計算してからワーカーに処理を依頼します。ワーカーは形式を判定し、"
    "文書をテキストに変換して、設定された上限を超える部分を切り詰めます。"
    "処理が終わると状態は「準備完了」になり、待機中のリクエストにすぐ通知されます。"
    "失敗した場合は理由を記録し、三回試しても成功しなければ失敗として扱います。\n\n"
    "会話の履歴はデータベースに保存され、各メッセージにはトークン数が付いています。"
    "履歴がモデルのコンテキストウィンドウを超えそうになると、予算の範囲で新しいメッセージを残し、"
    "古い部分は要約にまとめられます。要約の各項目には元のメッセージ番号が付くので、"
    "内容が正しいかどうかを一行ずつ確認できます。ピン留めされたメッセージは決して削除されず、"
    "ツールの呼び出しとその結果は必ず一緒に扱われます。\n\n"
    "プロバイダーのプロンプトキャッシュを効かせるために、切り取り位置は予算を再び超えるまで固定されます。"
    "そのため、各ターンの先頭部分はほとんど変わらず、費用と待ち時間が大きく下がります。"
)
KO = (
    "이 서비스는 에이전트가 사용할 컨텍스트를 백그라운드에서 준비합니다. "
    "사용자가 파일을 업로드하면 API는 먼저 임시 디렉터리에 파일을 쓰고 해시를 계산한 다음, "
    "작업자 프로세스에 처리를 맡깁니다. "
    "작업자는 파일 형식을 판별하고 문서를 일반 텍스트로 변환하며, "
    '설정된 한도를 넘는 부분은 잘라 냅니다. 처리가 끝나면 상태가 "준비됨"으로 바뀌고, '
    "기다리던 요청은 곧바로 알림을 받습니다. 처리에 실패하면 그 이유를 기록하고, "
    "세 번 시도한 뒤에도 실패하면 파일을 실패로 표시합니다.\n\n"
    "대화 기록은 데이터베이스에 저장되며 각 메시지에는 토큰 수가 함께 기록됩니다. "
    "기록이 모델의 컨텍스트 창을 넘어설 만큼 길어지면, 예산 안에서 최신 메시지를 남기고 "
    "오래된 부분은 요약으로 압축합니다. 요약의 각 항목에는 원래 메시지 번호가 붙어 있어서 "
    "사용자가 한 줄씩 확인할 수 있습니다. 고정된 메시지는 절대 삭제되지 않으며, "
    "도구 호출과 그 결과는 항상 함께 유지되거나 함께 제거됩니다.\n\n"
    "제공자의 프롬프트 캐시가 계속 적중하도록, "
    "잘라 내는 지점은 예산을 다시 넘을 때까지 유지됩니다. "
    "그래서 각 차례의 앞부분이 거의 그대로 남고, 비용과 지연 시간이 크게 줄어듭니다."
)


@dataclass(frozen=True, slots=True)
class Sample:
    kind: str  # prose, code, json, cjk: what the sample is
    name: str
    text: str


def _unwrap(text: str) -> str:
    """A reference section as prose: paragraphs joined, indented examples and rules out."""
    paragraphs = []
    for block in text.split("\n\n"):
        lines = block.splitlines()
        if not block.strip() or block.startswith("   ") or set(block.strip()) <= set("*=-"):
            continue
        paragraphs.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)


def _prose() -> list[Sample]:
    from pydoc_data.topics import topics

    return [Sample("prose", f"reference:{t}", _unwrap(topics[t])) for t in PROSE_TOPICS]


def _code() -> list[Sample]:
    import importlib

    return [
        Sample("code", f"stdlib:{m}", inspect.getsource(importlib.import_module(m)))
        for m in CODE_MODULES
    ]


def _records(seed: int = 7, n: int = 80) -> list[dict[str, object]]:
    rng = random.Random(seed)
    labels = ["bug", "worker", "api", "docs", "perf", "upload", "retry"]
    return [
        {
            "id": 4200 + i,
            "title": f"{rng.choice(['Retry', 'Upload', 'Parse', 'Index'])} fails after "
            f"{rng.randint(2, 90)} s on {rng.choice(['large', 'empty', 'nested'])} files",
            "state": rng.choice(["open", "closed"]),
            "labels": rng.sample(labels, 2),
            "assignee": rng.choice([None, "ana", "bo", "chen"]),
            "created_at": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z",
            "comments": rng.randint(0, 40),
            "score": round(rng.random(), 3),
        }
        for i in range(n)
    ]


def _json() -> list[Sample]:
    records = _records()
    return [
        Sample("json", "records:minified", json.dumps(records, separators=(",", ":"))),
        Sample("json", "records:indented", json.dumps(records, indent=2)),
    ]


def corpus() -> list[Sample]:
    cjk = [Sample("cjk", "zh", ZH), Sample("cjk", "ja", JA), Sample("cjk", "ko", KO)]
    return [*_prose(), *_code(), *_json(), *cjk]


def as_message(sample: Sample) -> str:
    """The sample as the context counts it: a message's compact JSON."""
    role = "tool" if sample.kind in ("code", "json") else "user"
    message = {"role": role, "content": sample.text}
    if role == "tool":
        message["tool_call_id"] = "call_1"
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))
