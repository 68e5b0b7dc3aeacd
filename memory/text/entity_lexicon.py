"""The word lists of the entity rules: kinship words, places, organisations, English and Chinese."""

from __future__ import annotations

# Kinship and social roles → (canonical key, English display, Chinese display). Every alias of one
# person ("mom", "mother", "我妈", "妈妈") points at one key, so a question in either language
# finds the same topic.
PEOPLE: dict[str, tuple[str, str]] = {
    "mother": ("Mom", "妈妈"),
    "father": ("Dad", "爸爸"),
    "sister": ("Sister", "姐妹"),
    "brother": ("Brother", "兄弟"),
    "wife": ("Wife", "妻子"),
    "husband": ("Husband", "丈夫"),
    "son": ("Son", "儿子"),
    "daughter": ("Daughter", "女儿"),
    "grandmother": ("Grandma", "奶奶"),
    "grandfather": ("Grandpa", "爷爷"),
    "partner": ("Partner", "伴侣"),
    "boss": ("Boss", "老板"),
    "friend": ("Friend", "朋友"),
    "colleague": ("Colleague", "同事"),
    "classmate": ("Classmate", "同学"),
    "roommate": ("Roommate", "室友"),
    "teacher": ("Teacher", "老师"),
    "doctor": ("Doctor", "医生"),
    "girlfriend": ("Girlfriend", "女朋友"),
    "boyfriend": ("Boyfriend", "男朋友"),
}

PEOPLE_EN: dict[str, str] = {
    "mom": "mother", "mum": "mother", "mother": "mother", "mommy": "mother", "mama": "mother",
    "dad": "father", "father": "father", "daddy": "father", "papa": "father",
    "sister": "sister", "sis": "sister", "brother": "brother", "bro": "brother",
    "wife": "wife", "husband": "husband", "son": "son", "daughter": "daughter",
    "grandma": "grandmother", "grandmother": "grandmother", "granny": "grandmother",
    "grandpa": "grandfather", "grandfather": "grandfather",
    "partner": "partner", "boss": "boss", "manager": "boss", "friend": "friend",
    "colleague": "colleague", "coworker": "colleague", "co-worker": "colleague",
    "classmate": "classmate", "roommate": "roommate", "flatmate": "roommate",
    "teacher": "teacher", "doctor": "doctor",
    "girlfriend": "girlfriend", "boyfriend": "boyfriend",
}  # fmt: skip

# Longest first when matched (see entities.py): "女朋友" before "朋友", "妈妈" before "妈".
PEOPLE_ZH: dict[str, str] = {
    "妈妈": "mother", "我妈": "mother", "母亲": "mother", "老妈": "mother", "妈": "mother",
    "爸爸": "father", "我爸": "father", "父亲": "father", "老爸": "father", "爸": "father",
    "姐姐": "sister", "妹妹": "sister", "我姐": "sister", "我妹": "sister", "姐妹": "sister",
    "哥哥": "brother", "弟弟": "brother", "我哥": "brother", "我弟": "brother",
    "老婆": "wife", "妻子": "wife", "太太": "wife", "媳妇": "wife",
    "老公": "husband", "丈夫": "husband", "我先生": "husband",
    "儿子": "son", "女儿": "daughter", "闺女": "daughter",
    "奶奶": "grandmother", "外婆": "grandmother", "姥姥": "grandmother",
    "爷爷": "grandfather", "外公": "grandfather", "姥爷": "grandfather",
    "老板": "boss", "领导": "boss", "上司": "boss",
    "朋友": "friend", "好友": "friend", "闺蜜": "friend", "哥们": "friend",
    "同事": "colleague", "同学": "classmate", "室友": "roommate",
    "老师": "teacher", "医生": "doctor", "女朋友": "girlfriend", "女友": "girlfriend",
    "男朋友": "boyfriend", "男友": "boyfriend",
}  # fmt: skip

# Places: key → (English display, Chinese display); the aliases of each are both names (and a
# few common variants below).
PLACES: dict[str, tuple[str, str]] = {
    "china": ("China", "中国"), "japan": ("Japan", "日本"), "korea": ("Korea", "韩国"),
    "usa": ("USA", "美国"), "uk": ("UK", "英国"), "france": ("France", "法国"),
    "germany": ("Germany", "德国"), "italy": ("Italy", "意大利"), "spain": ("Spain", "西班牙"),
    "canada": ("Canada", "加拿大"), "australia": ("Australia", "澳大利亚"),
    "singapore": ("Singapore", "新加坡"), "thailand": ("Thailand", "泰国"),
    "vietnam": ("Vietnam", "越南"), "india": ("India", "印度"), "russia": ("Russia", "俄罗斯"),
    "brazil": ("Brazil", "巴西"), "mexico": ("Mexico", "墨西哥"), "egypt": ("Egypt", "埃及"),
    "switzerland": ("Switzerland", "瑞士"), "netherlands": ("Netherlands", "荷兰"),
    "new zealand": ("New Zealand", "新西兰"), "iceland": ("Iceland", "冰岛"),
    "beijing": ("Beijing", "北京"), "shanghai": ("Shanghai", "上海"),
    "guangzhou": ("Guangzhou", "广州"), "shenzhen": ("Shenzhen", "深圳"),
    "chengdu": ("Chengdu", "成都"), "chongqing": ("Chongqing", "重庆"),
    "hangzhou": ("Hangzhou", "杭州"), "nanjing": ("Nanjing", "南京"), "wuhan": ("Wuhan", "武汉"),
    "xian": ("Xi'an", "西安"), "tianjin": ("Tianjin", "天津"), "suzhou": ("Suzhou", "苏州"),
    "xiamen": ("Xiamen", "厦门"), "qingdao": ("Qingdao", "青岛"), "kunming": ("Kunming", "昆明"),
    "hong kong": ("Hong Kong", "香港"), "taipei": ("Taipei", "台北"), "macau": ("Macau", "澳门"),
    "tokyo": ("Tokyo", "东京"), "osaka": ("Osaka", "大阪"), "kyoto": ("Kyoto", "京都"),
    "seoul": ("Seoul", "首尔"), "bangkok": ("Bangkok", "曼谷"),
    "new york": ("New York", "纽约"), "london": ("London", "伦敦"), "paris": ("Paris", "巴黎"),
    "berlin": ("Berlin", "柏林"), "rome": ("Rome", "罗马"), "madrid": ("Madrid", "马德里"),
    "amsterdam": ("Amsterdam", "阿姆斯特丹"), "sydney": ("Sydney", "悉尼"),
    "melbourne": ("Melbourne", "墨尔本"), "toronto": ("Toronto", "多伦多"),
    "vancouver": ("Vancouver", "温哥华"), "san francisco": ("San Francisco", "旧金山"),
    "los angeles": ("Los Angeles", "洛杉矶"), "seattle": ("Seattle", "西雅图"),
    "boston": ("Boston", "波士顿"), "chicago": ("Chicago", "芝加哥"),
    "dubai": ("Dubai", "迪拜"), "moscow": ("Moscow", "莫斯科"), "bali": ("Bali", "巴厘岛"),
}  # fmt: skip
PLACE_VARIANTS: dict[str, str] = {
    "united states": "usa", "america": "usa", "us": "usa", "u.s.": "usa",
    "united kingdom": "uk", "england": "uk", "britain": "uk", "nyc": "new york",
    "sf": "san francisco", "la": "los angeles", "xi'an": "xian", "peking": "beijing",
    "中國": "china", "日本国": "japan", "英格兰": "uk", "南韩": "korea",
}  # fmt: skip

# Organisations known by name alone.
ORGANISATIONS: dict[str, tuple[str, str]] = {
    "google": ("Google", "谷歌"), "microsoft": ("Microsoft", "微软"),
    "apple": ("Apple", "苹果公司"),
    "amazon": ("Amazon", "亚马逊"), "meta": ("Meta", "Meta"), "openai": ("OpenAI", "OpenAI"),
    "anthropic": ("Anthropic", "Anthropic"), "tencent": ("Tencent", "腾讯"),
    "alibaba": ("Alibaba", "阿里巴巴"), "bytedance": ("ByteDance", "字节跳动"),
    "baidu": ("Baidu", "百度"), "huawei": ("Huawei", "华为"), "ibm": ("IBM", "IBM"),
    "tesla": ("Tesla", "特斯拉"), "netflix": ("Netflix", "奈飞"), "nvidia": ("Nvidia", "英伟达"),
    "intel": ("Intel", "英特尔"), "samsung": ("Samsung", "三星"), "sony": ("Sony", "索尼"),
    "toyota": ("Toyota", "丰田"), "jd": ("JD.com", "京东"), "meituan": ("Meituan", "美团"),
    "netease": ("NetEase", "网易"), "tsinghua": ("Tsinghua University", "清华大学"),
    "peking university": ("Peking University", "北京大学"), "mit": ("MIT", "麻省理工"),
    "stanford": ("Stanford", "斯坦福"), "harvard": ("Harvard", "哈佛"),
}  # fmt: skip
ORGANISATION_VARIANTS: dict[str, str] = {
    "阿里": "alibaba", "字节": "bytedance", "清华": "tsinghua", "北大": "peking university",
    "jd.com": "jd", "stanford university": "stanford", "harvard university": "harvard",
    "tsinghua university": "tsinghua", "麻省理工学院": "mit",
}  # fmt: skip
ORGANISATION_SUFFIXES_EN = (
    "Inc", "Ltd", "LLC", "Corp", "Corporation", "University", "College", "Bank", "Hospital",
    "Institute", "Group", "Labs", "Company", "School", "Studio", "Studios", "Foundation",
)  # fmt: skip
ORGANISATION_SUFFIXES_ZH = ("公司", "大学", "银行", "医院", "学院", "集团", "研究所", "研究院",
                            "中学", "小学", "幼儿园", "工作室", "事务所")  # fmt: skip
PLACE_SUFFIXES_ZH = ("市", "省", "县", "州", "岛", "镇", "村")

# Capitalised words that are not names: sentence openers, pronouns, calendar words, languages.
NOT_NAMES = frozenset(
    """I I'm I've I'd I'll User The A An He She They We It This That These Those There His Her
    Their Our My Your Its Mr Mrs Ms Dr Prof Also And But Or So If When While After Before Then
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May
    June July August September October November December Today Tomorrow Yesterday Christmas
    Easter English Chinese Mandarin Cantonese French German Spanish Japanese Korean Italian
    Python Java JavaScript TypeScript Rust Go SQL Linux Windows Mac iPhone Android OK Okay Yes
    No Not Please Thanks Hi Hello Dear Sir Madam Mom Dad Mum Grandma Grandpa Sis Bro Every Each
    Some Many Most All None Next Last New Old Big Small Great Good Bad Happy Which What Who
    Whom Whose Where Why How Asked Likes Loves Prefers Wants Has Had Is Was Lives Works""".split()  # noqa: SIM905
)
# A capitalised word at the start of a sentence is a name only when a verb like these follows.
NAME_VERBS = frozenset(
    """is was has had likes loves works lives said says will got moved called visited wants
    and 's prefers plays studies teaches married started joined left bought runs""".split()  # noqa: SIM905
)
# Words after which a capitalised word is a person ("my friend Tom", "with Alice").
PERSON_CUES = frozenset(
    "friend colleague coworker boss sister brother cousin named called with met".split()  # noqa: SIM905
)
# Verbs after which "to X" names a place ("moved to Berlin", "a trip to Kyoto").
MOVE_WORDS = frozenset(
    """moved move moving flew fly flying flight trip travel travels traveled travelling traveling
    go goes going went relocate relocated relocating drive drove driving return returned back
    visit visiting visited""".split()  # noqa: SIM905
)
# English kinship words that name a person only after a possessive ("my manager", not "package
# manager").
NEEDS_POSSESSIVE = frozenset("manager partner doctor teacher mama papa sis bro".split())  # noqa: SIM905
# Common Chinese surnames: "小王", "老李", "王老师" are people, "小米" and "老家" are not.
SURNAMES_ZH = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方邹孟熊秦邱江尹薛闫段雷侯史陶黎贺顾毛郝龚"
    "邵万钱严覃武戴莫孔汤"
)
